import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EMBEDDED_PG_DEV_PASSWORD } from '../db/embedded';
import { dataDirSecrets } from './embedded-secrets';
import { freePort } from './net';
import { ROOT } from './temporal-tools';
import { waitUntil } from './wait';

export { freePort };

// `npm start` (scripts/start.ts) as a child process on free ports with a fresh data folder:
// every part a real process. The end-to-end tests and the bench drive it over HTTP.

export interface EmbeddedStack {
  child: ChildProcess;
  /** What the stack was started with, and the secrets it made for itself (scripts/embedded-secrets.ts). */
  env: NodeJS.ProcessEnv;
  ports: Record<string, number>;
  api: string;
  sandbox: string;
  /** The one webhook URL for all notification points (secret in the path). */
  ingress: string;
  temporalAddress: string;
  databaseUrl: string;
  /** Everything the stack printed, for failure messages. */
  output: () => string;
  /** SIGTERM, then the exit code; the data folder is removed. */
  stop: () => Promise<number | null>;
}

/** A free port for every part `npm start` runs, under the variables that set them. */
export async function freeStackPorts() {
  return {
    API_PORT: await freePort(),
    SANDBOX_PORT: await freePort(),
    SANDBOX_API_PIX_PORT: await freePort(),
    API_PIX_WEBHOOK_PORT: await freePort(),
    WORKER_HTTP_PORT: await freePort(),
    WORKER_SDK_METRICS_PORT: await freePort(),
    TEMPORAL_UI_PORT: await freePort(),
    EMBEDDED_PG_PORT: await freePort(),
    PIXFLOW_TEMPORAL_PORT: await freePort(),
  };
}

/** A fresh data folder (DATA_DIR) for one stack. */
export function newDataDir(label: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), `pixflow-${label}-`));
  chmodSync(dir, 0o755); // the embedded Postgres runs as its own user when we are root
  return dir;
}

export async function startEmbeddedStack(opts: {
  /** Names the data folder, e.g. "e2e" or "bench". */
  label: string;
  /** Must include API_KEYS, WEBHOOK_SECRET and WEBHOOK_PARTNER_ID; anything else overrides. */
  env: NodeJS.ProcessEnv & { WEBHOOK_SECRET: string };
  /** `npm start` options, e.g. --temporal postgres --workers 2 (scripts/start-options.ts). */
  args?: string[];
  timeoutMs?: number;
  /** A file that gets everything the stack prints, whole: `output()` keeps only its tail. */
  logFile?: string;
}): Promise<EmbeddedStack> {
  const ports = await freeStackPorts();
  const dataDir = newDataDir(opts.label);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    DATA_DIR: dataDir,
    ...opts.env,
  };
  // Each of these would mean "use an existing one" instead of starting it.
  for (const k of [
    'TEMPORAL_ADDRESS',
    'DATABASE_URL',
    'PROVIDER_BASE_URL',
    'PROVIDER_AUTH_URL',
    'PROVIDER_LIVENESS_URL',
    'API_PIX_BASE_URL',
  ]) {
    delete env[k];
  }

  const start = ['--import', 'tsx', path.join(ROOT, 'scripts/start.ts'), ...(opts.args ?? [])];
  const child = spawn(process.execPath, start, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const log = opts.logFile ? createWriteStream(opts.logFile, { flags: 'a' }) : undefined;
  // A log file that cannot be written (a full disk) must not take the stack down: `output()` stays.
  log?.on('error', () => undefined);
  const collect = (b: Buffer) => {
    log?.write(b);
    out += b.toString('utf8');
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  // After 'close', not 'exit': the pipes may still hold output when the process exits.
  child.on('close', () => log?.end());
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const code = await exited;
    rmSync(dataDir, { recursive: true, force: true });
    return code;
  };

  const state = () =>
    out.includes('pixflow is up') ? 'up' : child.exitCode !== null ? 'exited' : 'starting';
  const started = await waitUntil(state, (s) => s !== 'starting', {
    timeoutMs: opts.timeoutMs ?? 150_000,
    intervalMs: 250,
  }).catch(() => 'timed out');
  if (started !== 'up') {
    await stop();
    throw new Error(`the ${opts.label} stack did not come up:\n${out.slice(-4000)}`);
  }
  // Its parts run with them: a client of its Temporal or a hash of a CPF needs the same.
  const secrets = dataDirSecrets(dataDir, env);
  Object.assign(env, secrets.env);
  // The password npm start gave this folder's Postgres (a fresh folder always has one).
  const pgPassword = encodeURIComponent(secrets.postgresPassword ?? EMBEDDED_PG_DEV_PASSWORD);
  const api = `http://127.0.0.1:${ports.API_PORT}`;
  return {
    child,
    env,
    ports,
    api,
    sandbox: `http://127.0.0.1:${ports.SANDBOX_PORT}`,
    ingress: `${api}/webhooks/provider/${opts.env.WEBHOOK_SECRET}`,
    temporalAddress: `127.0.0.1:${ports.PIXFLOW_TEMPORAL_PORT}`,
    databaseUrl: `postgresql://pixflow:${pgPassword}@127.0.0.1:${ports.EMBEDDED_PG_PORT}/pixflow`,
    output: () => out,
    stop,
  };
}
