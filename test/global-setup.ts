import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from '../db/embedded';
import { migrate } from '../db/migrate';
import { freePort } from './helpers/ports';
import { startDevServer } from './helpers/temporal';

// Once per `vitest run`: a real Postgres (its own database for this run) and a real Temporal
// dev server, shared by every test file through provide/inject.

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
    temporalAddress: string;
    /** The workflows/ bundle, built once per run for every test worker. */
    workflowBundle: string;
  }
}

async function createRunDatabase(serverUrl: string): Promise<string> {
  const name = `pixflow_test_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const u = new URL(serverUrl);
  u.pathname = `/${name}`;
  return u.toString();
}

export default async function setup(project: TestProject) {
  const stops: Array<() => Promise<void>> = [];
  let databaseUrl: string;
  if (process.env.DATABASE_URL) {
    databaseUrl = await createRunDatabase(process.env.DATABASE_URL);
  } else {
    const runDir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-pg-'));
    // Postgres runs as its own user when we are root: it must be able to reach the folder.
    chmodSync(runDir, 0o755);
    const dataDir = path.join(runDir, 'data');
    const pgServer = await startEmbeddedPostgres({ dataDir, port: await freePort(), persistent: false });
    stops.push(() => pgServer.stop());
    databaseUrl = await pgServer.createDatabase('pixflow_test');
  }
  await migrate(databaseUrl);

  const temporal = await startDevServer();
  stops.push(() => temporal.teardown());

  const { code } = await bundleWorkflowCode({
    workflowsPath: path.resolve(__dirname, '../workflows/index.ts'),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} },
  });
  project.provide('workflowBundle', code);
  project.provide('databaseUrl', databaseUrl);
  project.provide('temporalAddress', temporal.address);

  return async () => {
    for (const stop of stops.reverse()) await stop().catch(() => {});
  };
}
