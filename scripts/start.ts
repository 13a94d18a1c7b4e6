// One file over 400 lines on purpose: the parts' start and stop order, their guards and their
// shared state read top to bottom here; how each server is made lives beside it (temporal-*.ts).

import { type ChildProcess, type StdioOptions, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { type Config, loadConfigOrExit } from '../common/config';
import { onShutdown } from '../common/http';
import { prettyLogLine } from '../common/logger';
import { SECRETS_READ_BY } from '../common/production-secrets';
import { searchAttributeCliArgs } from '../common/search-attributes';
import { migrate } from '../db/migrate';
import { PIXFLOW_NEXUS_ENDPOINT, pixflowService } from '../nexus/service';
import { apiPixPkiFiles } from '../sandbox/api-pix';
import { apiPixCurlOptions, apiPixEnv, apiPixHealthy } from './api-pix-part';
import { type DataDirSecrets, dataDirSecrets, SecretsFileError } from './embedded-secrets';
import { freePort, tcpOpen } from './net';
import { ensureNexusEndpoint } from './nexus-endpoint';
import { upsertOperator } from './operator';
import { postgresReadySchema } from './postgres-part';
import { NODE_RUNTIME_FLAGS, temporalRuntimeEnv } from './runtime-tuning';
import { parseStartOptions, type StartOptions, StartOptionsError } from './start-options';
import {
  clientTlsEnv,
  clientTlsOf,
  ensureTemporalCerts,
  TEMPORAL_TLS_SERVER_NAME,
  type TemporalClientTls,
} from './temporal-certs';
import {
  HISTORY_SHARDS,
  PERSISTENCE_DATABASE,
  postgresServerOf,
  prepareNamespace,
  serverConfig,
  serverServing,
  setupTemporalDatabases,
  type TemporalServerPorts,
  temporalServerPorts,
  VISIBILITY_DATABASE,
  writeServerConfig,
} from './temporal-server';
import {
  devServerDynamicConfigArgs,
  ensureTemporalCli,
  ensureTemporalServer,
  ROOT,
  runSetupStep,
  TEMPORAL_SERVER_REPORTED_VERSION,
  type TemporalServerTools,
} from './temporal-tools';
import { waitUntil } from './wait';

// `npm start`: the whole embedded stack in one command. Postgres (embedded), Temporal, provider
// sandbox, worker and API each start, are waited on until healthy, and stop together, in order
// (what calls before what it calls, Postgres last), on SIGINT (Ctrl-C), SIGTERM or SIGHUP, or when
// this process's parent dies. Every part runs in a process group of its own, so a Ctrl-C on the
// terminal reaches this process alone and nothing stops before what uses it. A part that fails
// to start is named, and the rest are stopped. Every part's log comes out here as it is
// written: readable lines on a terminal, JSON lines otherwise.
// `npm start -- --temporal postgres --workers 2 --apis 2` (scripts/start-options.ts) runs the
// Temporal server on the same Postgres instead of the CLI's dev server, and several workers and
// APIs; docs/production-temporal.md describes it.

const DEV_API_KEY = 'dev-api-key';
const say = (msg: string) => process.stdout.write(`${msg}\n`);

interface Part {
  name: string;
  child: ChildProcess;
  tail: string[];
  /** Tells the part's guard it was stopped here, so it leaves quietly. */
  release: () => void;
  /** Its lines go to its tail only: the Temporal server's chatter while its services join. */
  quiet: boolean;
  /** Called when it exits while the stack runs; true: handled (a replica started again). */
  onExit?: (reason: string) => boolean;
}

const parts: Part[] = [];
let releasePostgres = () => {};
let stopping: Promise<void> | undefined;

/** Thrown into the start-up sequence once the stack is stopping: nothing more is started. */
class Stopping extends Error {}

const prettify = process.stdout.isTTY ? prettyLogLine() : undefined;

/**
 * One line a part wrote: shown as it comes, and kept among its last lines for a failure message.
 * `replica` names which of several workers or APIs wrote a JSON line.
 */
function showLine(
  name: string,
  tail: string[],
  line: string,
  to: NodeJS.WriteStream,
  opts: { quiet?: boolean; replica?: string } = {},
) {
  if (!line.trim()) return;
  tail.push(line);
  if (tail.length > 15) tail.shift();
  // Temporal's warnings while it stops are about its own parts going away.
  if (opts.quiet || (stopping && name === 'temporal')) return;
  // The services write JSON lines (pino) that already carry their name; anything else is named here.
  const json = line.startsWith('{');
  const tagged = json && opts.replica ? `{"replica":${JSON.stringify(opts.replica)},${line.slice(1)}` : line;
  to.write(`${json ? (prettify?.(tagged) ?? tagged) : `[${name}] ${line}`}\n`);
}

/**
 * Stops a part with `signal` if this process dies without stopping it, even by SIGKILL (Linux
 * has no parent-death signal reachable from Node, and neither Postgres nor Temporal watch their
 * parent): a detached shell blocks reading a pipe from us, which closes only when we are gone.
 * A line on the pipe says the part was stopped here, and the shell leaves quietly. A pid read
 * from a file may be stale, so then only a process of the expected name is signalled.
 */
function guard(signal: 'INT' | 'TERM', target: { pid: number } | { pidFile: string; name: string }) {
  const script = [
    'read _ && exit 0',
    'pid=$2',
    '[ -n "$pid" ] || pid=$(head -n 1 "$3" 2>/dev/null)',
    '[ -n "$pid" ] || exit 0',
    'if [ -n "$4" ]; then',
    '  name=$(cat "/proc/$pid/comm" 2>/dev/null || ps -p "$pid" -o comm= 2>/dev/null)',
    '  [ "$name" = "$4" ] || exit 0',
    'fi',
    'kill -s "$1" "$pid" 2>/dev/null || exit 0',
    'i=0',
    'while [ $i -lt 100 ] && kill -0 "$pid" 2>/dev/null; do sleep 0.1; i=$((i + 1)); done',
    'kill -s KILL "$pid" 2>/dev/null',
  ].join('\n');
  const args = 'pid' in target ? [String(target.pid), '', ''] : ['', target.pidFile, target.name];
  // Detached: a signal to our process group (Ctrl-C) is for us, not for the guard.
  const shell = spawn('sh', ['-c', script, 'guard', signal, ...args], {
    detached: true,
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  shell.stdin?.on('error', () => {});
  return () => {
    shell.stdin?.end('stopped\n');
  };
}

function run(
  name: string,
  cmd: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  opts: { quiet?: boolean; replica?: boolean; ipc?: boolean } = {},
) {
  if (stopping) throw new Stopping();
  // Detached: Ctrl-C reaches this process alone, which stops the parts in order.
  const stdio: StdioOptions = ['ignore', 'pipe', 'pipe', ...(opts.ipc ? (['ipc'] as const) : [])];
  const child: ChildProcess = spawn(cmd, args, { cwd: ROOT, env, stdio, detached: true });
  const part: Part = { name, child, tail: [], release: () => {}, quiet: opts.quiet ?? false };
  // Node parts watch their parent themselves (common/http.ts); the others get a guard.
  if (child.pid !== undefined && cmd !== process.execPath) part.release = guard('TERM', { pid: child.pid });
  const show = (to: NodeJS.WriteStream) => (l: string) =>
    showLine(name, part.tail, l, to, { quiet: part.quiet, replica: opts.replica ? name : undefined });
  if (child.stdout) createInterface({ input: child.stdout }).on('line', show(process.stdout));
  if (child.stderr) createInterface({ input: child.stderr }).on('line', show(process.stderr));
  child.on('exit', (code, signal) => {
    if (stopping) return;
    const reason = signal ?? `code ${code}`;
    if (part.onExit?.(reason)) return;
    fail(`${name} exited unexpectedly (${reason})`, part);
  });
  parts.push(part);
  return part;
}

function tsx(name: string, file: string, env: NodeJS.ProcessEnv, replica = false) {
  return run(name, process.execPath, [...NODE_RUNTIME_FLAGS, '--import', 'tsx', path.join(ROOT, file)], env, {
    replica,
  });
}

async function waitFor(
  what: string,
  part: Part | undefined,
  probe: () => Promise<boolean>,
  timeoutMs = 60_000,
) {
  const healthy = async () => {
    if (stopping) throw new Stopping();
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

const exited = (child: ChildProcess) => child.exitCode !== null || child.signalCode !== null;

/** SIGTERM (SIGKILL after 10 s); resolves once the part has exited. */
async function stopPart(p: Part) {
  if (!exited(p.child)) {
    const gone = new Promise<void>((r) => p.child.once('exit', () => r()));
    p.child.kill('SIGTERM');
    const timer = setTimeout(() => p.child.kill('SIGKILL'), 10_000);
    await gone;
    clearTimeout(timer);
  }
  p.release();
}

/**
 * Callers before what they call: the API, worker and sandbox, once they have exited Temporal,
 * then Postgres (its part stops it, waiting for it if it is still starting).
 */
function stopAll(): Promise<void> {
  stopping ??= (async () => {
    const last = ['temporal', 'postgres'];
    await Promise.all(parts.filter((p) => !last.includes(p.name)).map(stopPart));
    for (const name of last) await Promise.all(parts.filter((p) => p.name === name).map(stopPart));
    releasePostgres();
  })();
  return stopping;
}

function fail(message: string, part?: Part) {
  if (stopping) return;
  process.stderr.write(`\npixflow start: ${message}\n`);
  if (part?.tail.length) process.stderr.write(`last output of ${part.name}:\n  ${part.tail.join('\n  ')}\n`);
  process.stderr.write('stopping the other parts...\n');
  void stopAll().finally(() => process.exit(1));
}

/** DATABASE_URL if given, else an embedded Postgres under <DATA_DIR>/pg; migrated either way. */
async function startPostgres(config: Config, dataDir: string, password?: string): Promise<string> {
  let databaseUrl = config.DATABASE_URL;
  if (!databaseUrl) {
    if (stopping) throw new Stopping();
    say(`starting Postgres (embedded, data in ${path.join(config.DATA_DIR, 'pg')})...`);
    const pgDir = path.join(dataDir, 'pg');
    // Read when needed: the server writes its pid there as it starts. Should its part be killed
    // (it stops Postgres itself otherwise), this stops Postgres.
    releasePostgres = guard('INT', { pidFile: path.join(pgDir, 'postmaster.pid'), name: 'postgres' });
    const file = path.join(ROOT, 'scripts/postgres-part.ts');
    const part = run(
      'postgres',
      process.execPath,
      ['--import', 'tsx', file, pgDir, String(config.EMBEDDED_PG_PORT)],
      { ...process.env, ...(password ? { EMBEDDED_PG_PASSWORD: password } : {}) },
      { ipc: true },
    );
    // Until it serves, an exit is reported below, once its output has all been read.
    part.onExit = () => true;
    databaseUrl = await new Promise<string>((resolve, reject) => {
      part.child.once('message', (m) => {
        const ready = postgresReadySchema.safeParse(m);
        if (ready.success) resolve(ready.data.url);
        else reject(new StartError('Postgres started but its part sent no database URL', part));
      });
      part.child.once('close', () => {
        reject(
          stopping
            ? new Stopping()
            : new StartError(`Postgres failed to start on port ${config.EMBEDDED_PG_PORT}`, part),
        );
      });
    });
    part.onExit = undefined;
  }
  await migrate(databaseUrl).catch((err) => {
    throw new StartError(`database migrations failed: ${err instanceof Error ? err.message : String(err)}`);
  });
  return databaseUrl;
}

/**
 * The CLI's dev server with a SQLite file, and its UI; waited on until both answer. The dev
 * server picks its internal ports itself (frontend HTTP, metrics, membership) and binds them a
 * moment later; another process can take one in between, and the server then exits at once.
 * That race is retried; any other early exit is reported.
 */
async function startTemporal(config: Config, cli: string, dataDir: string) {
  const port = config.PIXFLOW_TEMPORAL_PORT;
  if (await tcpOpen(port))
    throw new StartError(`port ${port} is already in use; is another Temporal running?`);
  say('starting Temporal dev server...');
  for (let attempt = 1; ; attempt++) {
    const temporal = run('temporal', cli, devServerArgs(config, dataDir), temporalRuntimeEnv(process.env));
    let lostPortRace = false;
    const watch = (b: unknown) => {
      if (String(b).includes('address already in use')) lostPortRace = true;
    };
    temporal.child.stdout?.on('data', watch);
    temporal.child.stderr?.on('data', watch);
    // Until it serves, an exit is the waiters' to judge, once its output has all been read.
    const closed = new Promise<void>((r) => temporal.child.once('close', () => r()));
    temporal.onExit = () => true;
    try {
      await waitFor('Temporal', temporal, () => tcpOpen(port));
      await waitFor('Temporal UI', temporal, httpOk(`http://127.0.0.1:${config.TEMPORAL_UI_PORT}/`));
      temporal.onExit = undefined;
      return;
    } catch (err) {
      if (!exited(temporal.child)) throw err;
      await closed;
      if (!lostPortRace || attempt === 3) throw err;
      parts.splice(parts.indexOf(temporal), 1);
      temporal.release();
      say('Temporal lost one of the ports it picked to another process; starting it again...');
    }
  }
}

function devServerArgs(config: Config, dataDir: string): string[] {
  return [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(config.PIXFLOW_TEMPORAL_PORT),
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
  ];
}

/**
 * The Temporal server with every service in one process, on the same Postgres as pixflow (its
 * own two databases), its schemas set up or migrated first; waited on until every service
 * serves and the namespace with pixflow's search attributes is ready. No UI: the dev server
 * embeds one, this server does not (docker-compose.yml runs temporalio/ui beside it). Mutual
 * TLS, as production runs it: a private CA made once in the data folder (temporal-tls/), every
 * port requiring a client certificate of it; the CLI calls here, the workers and APIs get the
 * client's.
 */
async function startServerTemporal(
  config: Config,
  tools: { cli: string; server: TemporalServerTools },
  databaseUrl: string,
  dataDir: string,
): Promise<{ ports: TemporalServerPorts; tls: TemporalClientTls }> {
  const port = config.PIXFLOW_TEMPORAL_PORT;
  if (await tcpOpen(port))
    throw new StartError(`port ${port} is already in use; is another Temporal running?`);
  const pg = postgresServerOf(databaseUrl);
  say(
    `setting up Temporal's databases (${PERSISTENCE_DATABASE}, ${VISIBILITY_DATABASE}) with temporal-sql-tool...`,
  );
  await setupTemporalDatabases(tools.server, pg).catch((err: Error) => {
    throw new StartError(`Temporal's schema setup failed: ${err.message}`);
  });
  let certs: ReturnType<typeof ensureTemporalCerts>;
  try {
    certs = ensureTemporalCerts(path.join(dataDir, 'temporal-tls'));
  } catch (err) {
    throw new StartError(`Temporal's certificates could not be made: ${(err as Error).message}`);
  }
  const tls = clientTlsOf(certs);
  const ports = await temporalServerPorts(port);
  const args = writeServerConfig(
    path.join(dataDir, 'temporal-server'),
    serverConfig(pg, ports, 'warn', certs),
  );
  say(
    `starting Temporal server ${TEMPORAL_SERVER_REPORTED_VERSION} on Postgres (${HISTORY_SHARDS} history shards)...`,
  );
  // Quiet until it serves: its services log errors about each other while they join.
  const temporal = run('temporal', tools.server.server, args, temporalRuntimeEnv(process.env), {
    quiet: true,
  });
  const target = { address: `127.0.0.1:${port}`, tls };
  await waitFor('Temporal', temporal, () => serverServing(tools.cli, target), 120_000);
  await prepareNamespace(tools.cli, target, config.TEMPORAL_NAMESPACE).catch((err: Error) => {
    if (stopping) throw new Stopping();
    throw new StartError(`Temporal's namespace setup failed: ${err.message}`, temporal);
  });
  temporal.quiet = false;
  return { ports, tls };
}

/**
 * The Nexus endpoint other namespaces' workflows call pixflow through (docs/nexus.md), on the
 * Temporal started here: to pixflow's namespace and task queue, where the worker serves it.
 */
async function prepareNexusEndpoint(config: Config, cli: string, tls?: TemporalClientTls): Promise<string> {
  const target = { namespace: config.TEMPORAL_NAMESPACE, taskQueue: config.TEMPORAL_TASK_QUEUE };
  await ensureNexusEndpoint(cli, { address: config.TEMPORAL_ADDRESS, tls }, target).catch((err: Error) => {
    if (stopping) throw new Stopping();
    throw new StartError(`the Nexus endpoint could not be made: ${err.message}`);
  });
  return `${PIXFLOW_NEXUS_ENDPOINT} (service ${pixflowService.name}, to namespace ${target.namespace}, task queue ${target.taskQueue})`;
}

/**
 * The caller's environment with this data folder's secrets where it sets none, and the embedded
 * stack's API key outside production; checked as the API reads it (every secret) before anything
 * starts. Under NODE_ENV=production that refuses the dev key and any other public value.
 */
function stackEnvOrExit(dataDir: string): {
  env: NodeJS.ProcessEnv;
  config: Config;
  secrets: DataDirSecrets;
} {
  let secrets: DataDirSecrets;
  try {
    secrets = dataDirSecrets(dataDir, process.env);
  } catch (err) {
    if (!(err instanceof SecretsFileError)) throw err;
    process.stderr.write(`pixflow start: ${err.message}\n`);
    process.exit(1);
  }
  const env: NodeJS.ProcessEnv = { ...process.env, ...secrets.env };
  if (!env.API_KEYS && env.NODE_ENV !== 'production') env.API_KEYS = DEV_API_KEY;
  // With its sandbox, the stack screens people against the sandbox's eligibility emulation:
  // set before the configuration is checked, as production refuses to start screening no one.
  if (!env.PROVIDER_BASE_URL)
    env.ELIGIBILITY_URL ??= `http://127.0.0.1:${loadConfigOrExit(env, { secrets: [] }).SANDBOX_PORT}/eligibility/check`;
  if (secrets.older)
    say(
      `${dataDir} holds data from before npm start made secrets of its own: its parts keep the public development defaults that data was sealed with. Remove the folder to start afresh with its own.`,
    );
  return { env, config: loadConfigOrExit(env, { secrets: SECRETS_READ_BY.api }), secrets };
}

/** Whether npm start runs the API Pix PSP's emulation: with the sandbox, and no PSP configured. */
const startsApiPix = () => !process.env.PROVIDER_BASE_URL && !process.env.API_PIX_BASE_URL;

/** API_PIX_WEBHOOK_PORT, taken out of the environment when npm start runs the PSP itself. */
function takeApiPixWebhookPort(): string | undefined {
  if (!startsApiPix()) return undefined;
  const port = process.env.API_PIX_WEBHOOK_PORT;
  delete process.env.API_PIX_WEBHOOK_PORT;
  return port;
}

/** What the sandbox, worker and API are started with. */
function childEnvFor(stackEnv: NodeJS.ProcessEnv, config: Config, databaseUrl: string): NodeJS.ProcessEnv {
  return {
    ...stackEnv,
    DATABASE_URL: databaseUrl,
    PIXFLOW_TEMPORAL_PORT: String(config.PIXFLOW_TEMPORAL_PORT),
    // Embedded stack only: the local UI may decode payloads without a token.
    CODEC_TRUST_LOOPBACK_UI: stackEnv.CODEC_TRUST_LOOPBACK_UI ?? 'true',
    // Embedded stack only: a backend on this machine may receive webhooks over http.
    WEBHOOK_ALLOW_LOOPBACK: stackEnv.WEBHOOK_ALLOW_LOOPBACK ?? 'true',
  };
}

async function startSandbox(config: Config, env: NodeJS.ProcessEnv) {
  say('starting provider sandbox...');
  const sandbox = tsx('sandbox', 'sandbox/main.ts', env);
  await waitFor('sandbox', sandbox, httpOk(`http://127.0.0.1:${config.SANDBOX_PORT}/healthz`));
}

/** The API Pix PSP's emulation, its certificates made in `env`'s SANDBOX_API_PIX_PKI_DIR. */
async function startApiPixSandbox(config: Config, env: NodeJS.ProcessEnv) {
  say('starting API Pix sandbox...');
  const part = tsx('API Pix sandbox', 'sandbox/api-pix/main.ts', env);
  const pki = apiPixPkiFiles(env.SANDBOX_API_PIX_PKI_DIR ?? '');
  await waitFor('API Pix sandbox', part, () => apiPixHealthy(config, pki));
}

/**
 * A worker or an API process. Each has its own ports: the first the configured ones
 * (WORKER_HTTP_PORT and WORKER_SDK_METRICS_PORT, API_PORT), the others free ones.
 */
interface Replica {
  kind: 'worker' | 'API';
  /** "worker", or "worker 2" when there are several. */
  name: string;
  file: string;
  env: NodeJS.ProcessEnv;
  port: number;
  health: string;
  /** Answered its health check once: if it dies after that, it is started again. */
  wasHealthy: boolean;
  /** A worker's Worker Deployment Version, as its health check tells it. */
  build?: z.infer<typeof workerBuildSchema>;
}

/** What a worker's /healthz says of its place in its deployment (worker/main.ts). */
const workerBuildSchema = z.object({
  deploymentName: z.string(),
  buildId: z.string(),
  promotion: z.string().optional(),
});

async function workerBuild(health: string) {
  const res = await fetch(health, { signal: AbortSignal.timeout(2000) }).catch(() => undefined);
  const parsed = workerBuildSchema.safeParse(await res?.json().catch(() => undefined));
  return parsed.success ? parsed.data : undefined;
}

async function replicasOf(
  kind: Replica['kind'],
  count: number,
  env: NodeJS.ProcessEnv,
  ports: (i: number) => Promise<Record<string, number>>,
): Promise<Replica[]> {
  const replicas: Replica[] = [];
  for (let i = 0; i < count; i++) {
    const own = await ports(i);
    const port = own.API_PORT ?? own.WORKER_HTTP_PORT ?? 0;
    replicas.push({
      kind,
      name: count === 1 ? kind.toLowerCase() : `${kind} ${i + 1}`,
      file: kind === 'API' ? 'api/main.ts' : 'worker/main.ts',
      env: { ...env, ...Object.fromEntries(Object.entries(own).map(([k, v]) => [k, String(v)])) },
      port,
      health: `http://127.0.0.1:${port}/${kind === 'API' ? 'readyz' : 'healthz'}`,
      wasHealthy: false,
    });
  }
  return replicas;
}

function planReplicas(config: Config, options: StartOptions, env: NodeJS.ProcessEnv) {
  const workers = replicasOf('worker', options.workers, env, async (i) => ({
    WORKER_HTTP_PORT: i === 0 ? config.WORKER_HTTP_PORT : await freePort(),
    WORKER_SDK_METRICS_PORT: i === 0 ? config.WORKER_SDK_METRICS_PORT : await freePort(),
  }));
  const apis = replicasOf('API', options.apis, env, async (i) => ({
    API_PORT: i === 0 ? config.API_PORT : await freePort(),
    // The PSP posts to the first API's listener (API_PIX_WEBHOOK_URL); the others open their own.
    ...(i > 0 && env.API_PIX_WEBHOOK_PORT ? { API_PIX_WEBHOOK_PORT: await freePort() } : {}),
  }));
  return Promise.all([workers, apis]);
}

/**
 * Starts a replica and waits until it is healthy. One of several that dies after it was healthy
 * is started again on the same ports, as a process manager restarts a replica, while the others
 * carry the load; one that dies before (or the only one of its kind) stops the stack. One that
 * was stopped on purpose (SIGTERM from elsewhere: it exits 0 once its tasks are done) stays
 * stopped, as the workers of an old build are retired after a roll-out (docs/versioning.md).
 */
async function startReplica(r: Replica, siblings: number): Promise<void> {
  const part = tsx(r.name, r.file, r.env, siblings > 1);
  part.onExit = (reason) => {
    if (r.wasHealthy && reason === 'code 0') {
      say(`${r.name} stopped (code 0): not started again`);
      return true;
    }
    if (!r.wasHealthy || siblings < 2) return false;
    say(`${r.name} exited (${reason}); starting it again on port ${r.port}...`);
    r.wasHealthy = false;
    setTimeout(() => {
      startReplica(r, siblings).then(
        () => say(`${r.name} is back: ${r.health}`),
        (err: unknown) => {
          if (err instanceof Stopping) return;
          fail(err instanceof Error ? err.message : String(err), err instanceof StartError ? err.part : part);
        },
      );
    }, 1_000);
    return true;
  };
  const what = siblings > 1 ? r.name : r.kind;
  await waitFor(what, part, httpOk(r.health), r.kind === 'worker' ? 120_000 : 60_000);
  r.wasHealthy = true;
  if (r.kind === 'worker') r.build = await workerBuild(r.health);
}

async function startReplicas(replicas: Replica[]) {
  const [first] = replicas;
  if (!first) return;
  say(replicas.length === 1 ? `starting ${first.kind}...` : `starting ${replicas.length} ${first.kind}s...`);
  await Promise.all(replicas.map((r) => startReplica(r, replicas.length)));
}

/**
 * The API's one ingress URL: the sandbox posts every notification point there (its
 * SANDBOX_NOTIFICATION_URL), so a deposit paid there drives its workflow with nobody touching
 * anything else.
 */
function ingressUrl(config: Config): string {
  return `http://127.0.0.1:${config.API_PORT}/webhooks/provider/${encodeURIComponent(config.WEBHOOK_SECRET)}`;
}

interface Started {
  databaseUrl: string;
  /** The back office's dev operators, made on the embedded Postgres only. */
  devOperators?: DevOperator[];
  apiKeys: string | undefined;
  /** This data folder's secrets file; none on a folder from before there was one. */
  secretsFile: string | undefined;
  /** The Temporal started here: the dev server (with its UI), the server on Postgres, or none. */
  temporal: 'dev' | TemporalServerPorts | undefined;
  /** The Nexus endpoint made on the Temporal started here. */
  nexusEndpoint: string | undefined;
  sandbox: boolean;
  /** The API Pix emulation's certificates, when it runs here. */
  apiPixPkiDir: string | undefined;
  apis: Replica[];
  workers: Replica[];
}

const label = (text: string) => `  ${text.padEnd(18)}`;

function temporalLines(config: Config, temporal: Started['temporal']) {
  if (typeof temporal !== 'object') {
    say(`${label('Temporal')}${config.TEMPORAL_ADDRESS} (namespace ${config.TEMPORAL_NAMESPACE})`);
    if (temporal === 'dev') say(`${label('Temporal UI')}http://127.0.0.1:${config.TEMPORAL_UI_PORT}`);
    return;
  }
  say(
    `${label('Temporal')}${config.TEMPORAL_ADDRESS} (namespace ${config.TEMPORAL_NAMESPACE}; server ${TEMPORAL_SERVER_REPORTED_VERSION} on Postgres, ${HISTORY_SHARDS} history shards, no UI)`,
  );
  const t = temporal;
  say(
    `${label('Temporal ports')}frontend HTTP ${t.frontendHttp}, history ${t.history}, matching ${t.matching}, worker ${t.worker}; membership ${t.frontendMembership}, ${t.historyMembership}, ${t.matchingMembership}, ${t.workerMembership}`,
  );
  const client = path.join(path.resolve(ROOT, config.DATA_DIR), 'temporal-tls', 'client');
  say(
    `${label('Temporal TLS')}mutual: clients need a certificate of its CA; the temporal CLI: --tls-ca-path ${client}/ca.pem --tls-cert-path ${client}/client.pem --tls-key-path ${client}/client.key --tls-server-name ${TEMPORAL_TLS_SERVER_NAME}`,
  );
}

function printBanner(config: Config, started: Started) {
  say('');
  say('pixflow is up:');
  const several = started.apis.length > 1;
  const key = started.apiKeys === DEV_API_KEY ? DEV_API_KEY : '<your API_KEYS>';
  started.apis.forEach((r, i) => {
    const auth = i === 0 ? `   (Authorization: Bearer ${key})` : '';
    say(`${label(several ? `API ${i + 1}` : 'API')}http://127.0.0.1:${r.port}${auth}`);
  });
  say(`${label('API docs')}http://127.0.0.1:${config.API_PORT}/docs`);
  const signIn = started.devOperators
    ? '   (sign in as one of these; passwords new at every start)'
    : '   (operators: npm run operator -- create)';
  say(`${label('back office')}http://127.0.0.1:${config.API_PORT}/backoffice${signIn}`);
  for (const o of started.devOperators ?? [])
    say(`${label(`  ${o.role}`)}${o.email} / ${o.password}${o.may ? `   (${o.may})` : ''}`);
  if (started.sandbox) {
    // It has one notification URL: the first API's ingress.
    const to = several ? '   (its notifications go to API 1)' : '';
    say(`${label('provider sandbox')}http://127.0.0.1:${config.SANDBOX_PORT}${to}`);
  }
  if (started.apiPixPkiDir) {
    const pki = apiPixPkiFiles(started.apiPixPkiDir);
    say(
      `${label('API Pix sandbox')}https://127.0.0.1:${config.SANDBOX_API_PIX_PORT}   (curl ${apiPixCurlOptions(pki)})`,
    );
    say(
      `${label('API Pix webhooks')}its webhooks reach API 1 over mutual TLS on port ${started.apis[0]?.env.API_PIX_WEBHOOK_PORT}`,
    );
  }
  temporalLines(config, started.temporal);
  if (started.nexusEndpoint) say(`${label('Nexus endpoint')}${started.nexusEndpoint}`);
  started.workers.forEach((r, i) => {
    say(`${label(started.workers.length > 1 ? `worker ${i + 1} health` : 'worker health')}${r.health}`);
  });
  const builds = new Set(
    started.workers.map(
      (r) => r.build && `${r.build.buildId} (deployment ${r.build.deploymentName}, ${r.build.promotion})`,
    ),
  );
  for (const build of builds) if (build) say(`${label('worker build')}${build}`);
  const temporalDbs =
    typeof started.temporal === 'object'
      ? ` (Temporal: ${PERSISTENCE_DATABASE}, ${VISIBILITY_DATABASE})`
      : '';
  if (started.secretsFile) say(`${label('secrets')}${started.secretsFile} (made at the first start)`);
  say(`${label('Postgres')}${started.databaseUrl.replace(/:[^:@/]+@/, ':***@')}${temporalDbs}`);
  say(
    `${label('logs')}here, as each part writes them (${prettify ? 'readable lines' : 'JSON lines'}; LOG_LEVEL=${config.LOG_LEVEL}, set debug for more or warn for less)`,
  );
  say('Ctrl-C stops everything.');
}

/** The command line's options; a wrong one prints why and the usage, and exits 1. */
function optionsOrExit(): StartOptions {
  try {
    return parseStartOptions(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof StartOptionsError)) throw err;
    process.stderr.write(`pixflow start: ${err.message}\n`);
    process.exit(1);
  }
}

async function main() {
  const options = optionsOrExit();
  // The webhook listener's port alone, for the API Pix PSP started here: its other settings come
  // with the PSP's certificates (apiPixEnv), after the configuration is checked without it.
  const apiPixWebhookPort = takeApiPixWebhookPort();
  // Where the data folder is; the secrets it keeps come into the configuration next.
  const dataDir = path.resolve(ROOT, loadConfigOrExit(process.env, { secrets: [] }).DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  const { env: stackEnv, config, secrets } = stackEnvOrExit(dataDir);
  // Each of these set means "use the existing one" instead of starting it here.
  const embeddedTemporal = !process.env.TEMPORAL_ADDRESS;
  const embeddedSandbox = !process.env.PROVIDER_BASE_URL;
  const cli = runSetupStep(ensureTemporalCli);
  // Built (or found) before anything starts: a build that fails leaves nothing running.
  const server =
    embeddedTemporal && options.temporal === 'postgres' ? runSetupStep(ensureTemporalServer) : undefined;
  if (!embeddedTemporal && options.temporal === 'postgres')
    say(`TEMPORAL_ADDRESS is set: using the Temporal at ${config.TEMPORAL_ADDRESS}, not starting one`);
  onShutdown(async (reason) => {
    await stopAll();
    say(`pixflow stopped (${reason}): every part is down.`);
  });

  const databaseUrl = await startPostgres(config, dataDir, secrets.postgresPassword);
  let temporal: Started['temporal'];
  // The client certificate of the server started here (mutual TLS); the dev server has no TLS.
  let temporalTls: TemporalClientTls | undefined;
  if (server)
    ({ ports: temporal, tls: temporalTls } = await startServerTemporal(
      config,
      { cli, server },
      databaseUrl,
      dataDir,
    ));
  else if (embeddedTemporal) {
    await startTemporal(config, cli, dataDir);
    temporal = 'dev';
  }
  const nexusEndpoint = temporal ? await prepareNexusEndpoint(config, cli, temporalTls) : undefined;
  // With the first provider's sandbox, an emulated API Pix PSP too, unless one is configured.
  const embeddedApiPix = startsApiPix();
  const env = {
    ...childEnvFor(stackEnv, config, databaseUrl),
    ...(temporalTls && clientTlsEnv(temporalTls)),
    ...(embeddedApiPix && apiPixEnv(config, dataDir, stackEnv, apiPixWebhookPort)),
  };
  if (embeddedSandbox)
    await startSandbox(config, {
      ...env,
      SANDBOX_NOTIFICATION_URL: env.SANDBOX_NOTIFICATION_URL ?? ingressUrl(config),
    });
  if (embeddedApiPix) await startApiPixSandbox(config, env);
  const [workers, apis] = await planReplicas(config, options, env);
  await startReplicas(workers);
  await startReplicas(apis);
  printBanner(config, {
    databaseUrl,
    devOperators: config.DATABASE_URL ? undefined : await createDevOperators(databaseUrl),
    apiKeys: env.API_KEYS,
    secretsFile: secrets.older ? undefined : secrets.file,
    temporal,
    nexusEndpoint,
    sandbox: embeddedSandbox,
    apiPixPkiDir: embeddedApiPix ? env.SANDBOX_API_PIX_PKI_DIR : undefined,
    apis,
    workers,
  });
}

interface DevOperator {
  role: 'reviewer' | 'approver' | 'admin';
  email: string;
  password: string;
  /** What the role adds, said beside it. */
  may?: string;
}

/**
 * Operators to sign in to the back office with, their passwords new at every start: the dev
 * stack's database is this machine's own, and the passwords are shown only here. An approver and
 * an admin (who approves too) beside the reviewer: two different operators, so a large payout's
 * four eyes can be tried (docs/tour.md).
 */
async function createDevOperators(databaseUrl: string): Promise<DevOperator[]> {
  const made: DevOperator[] = [];
  for (const [role, may] of [
    ['reviewer', undefined],
    ['approver', 'also approves large payouts'],
    ['admin', 'also approves payouts and makes API keys'],
  ] as const) {
    const email = `${role}@pixflow.local`;
    const name = `Dev ${role}`;
    const { password } = await upsertOperator(databaseUrl, { email, name, role }, true);
    made.push({ role, email, password, may });
  }
  return made;
}

main().catch((err) => {
  if (err instanceof Stopping) return;
  if (err instanceof StartError) fail(err.message, err.part);
  else fail(err instanceof Error ? (err.stack ?? err.message) : String(err));
});
