import { fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { pixflowDataConverter } from '../common/codec';
import { type Config, loadConfig } from '../common/config';
import { temporalConnectionOptions } from '../common/temporal-connection';
import { NODE_RUNTIME_FLAGS } from '../scripts/runtime-tuning';
import { onboardPeople, type People } from '../test/helpers/people';
import { cpuMsBetween, cpuSnapshot } from './proc';
import { runTag, say, settings, sleep } from './settings';
import { API_KEY, type BenchStack, startBenchStack } from './stack';

// Set-up and teardown of a run: pixflow's stack, and the bench's own connections to it (a
// Temporal client, a Postgres pool on the flows table), the floor's workers and the same-work
// floor's worker and server, each a process of its own as pixflow's worker and API are.

/** What every step works with. */
export interface Bench {
  stack: BenchStack;
  config: Config;
  client: Client;
  pool: pg.Pool;
  /** Onboarded (approved) at the start: every deposit and withdrawal of the API's is theirs. */
  people: People;
  /** When each floor workflow ran its last activity (ms), by workflow id. */
  floorDone: Map<string, number>;
  /**
   * The bench's own processes by part: the floor's workers (`floor-worker`), the same-work
   * floor's worker and server (`same-work-worker`, `same-work-server`).
   */
  ownPids: Record<string, number[]>;
  /** The same-work floor's HTTP server (bench/same-work-floor/server.ts). */
  sameWorkUrl: string;
  /** Provider tokens the same-work floor's worker has asked for: the sandbox counts them with pixflow's. */
  sameWorkTokenRequests(): number;
  /** The API to send the next request to: each of the stack's in turn. */
  api(): string;
  /** Stops the floor workers, closes the connections, then stops the stack. */
  close(): Promise<void>;
}

let stacksStarted = 0;

/**
 * pixflow's stack on free ports, with the settings the bench needs and `args` (a production
 * run's `npm start` options). Everything else is the stack's production default: the QR's 30 minutes, the
 * reconciliation's schedule and rates.
 */
export function startStack(args: string[] = []): Promise<BenchStack> {
  // Whole, for what a run meets (an answer 500, a server that stops): the stack keeps only a tail.
  stacksStarted += 1;
  const logFile = path.join(os.tmpdir(), `pixflow-bench-${runTag}-stack-${stacksStarted}.log`);
  say(`the stack's output: ${logFile}`);
  return startBenchStack(
    {
      LOG_LEVEL: 'warn',
      // The bench is one client offering far more than a real one: the per-key limit would answer 429.
      API_RATE_LIMIT_PER_MINUTE: '0',
    },
    240_000,
    args,
    logFile,
  );
}

/** What the bench's own processes tell it: a floor flow done, the same-work worker's provider tokens. */
interface OwnMessage {
  done?: string;
  at?: number;
  tokenRequests?: number;
}

/**
 * One of the bench's own processes (a floor's worker or server) forked with the stack's
 * environment and the Node flags pixflow's processes run with; ready once it says so (with its
 * URL when it listens). Its other messages go to `onMessage`.
 */
async function forkOwn(module: string, stack: BenchStack, onMessage: (m: OwnMessage) => void = () => {}) {
  const child = fork(require.resolve(module), [], {
    execArgv: [...NODE_RUNTIME_FLAGS, '--import', 'tsx'],
    env: { ...stack.env, BENCH_TEMPORAL_ADDRESS: stack.temporalAddress, DATABASE_URL: stack.databaseUrl },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = await new Promise<string>((resolve, reject) => {
    child.on('message', (m: OwnMessage & { ready?: boolean; url?: string }) => {
      if (m.ready) resolve(m.url ?? '');
      else onMessage(m);
    });
    void exited.then(() => reject(new Error(`${module} exited while starting`)));
  });
  return {
    pid: child.pid as number,
    url,
    stop: async () => {
      if (child.connected) child.send('stop');
      await exited;
    },
  };
}

/** A floor worker (floor-worker.ts): what it reports done goes into `floorDone`. */
const startFloorWorker = (stack: BenchStack, floorDone: Map<string, number>) =>
  forkOwn('./floor-worker', stack, (m) => {
    if (m.done && m.at) floorDone.set(m.done, m.at);
  });

/**
 * The bench's connections to a stack, `floorWorkers` workers for the floor (as many as the
 * stack has of its own), and `settings.people` onboarded people.
 */
export async function connect(stack: BenchStack, opts: { floorWorkers?: number } = {}): Promise<Bench> {
  const config = loadConfig(stack.env);
  const dataConverter = pixflowDataConverter(config.codecKeys);
  // A production server's stack carries its client certificate (TEMPORAL_TLS_*), the dev server's none.
  const connection = await Connection.connect({
    ...temporalConnectionOptions(config),
    address: stack.temporalAddress,
  });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter });
  const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
  pool.on('error', () => {}); // Postgres stops with the stack at the end

  const floorDone = new Map<string, number>();
  const floorWorkers = await Promise.all(
    Array.from({ length: opts.floorWorkers ?? 1 }, () => startFloorWorker(stack, floorDone)),
  );
  // The worker first: it creates the floor's table.
  let sameWorkTokens = 0;
  const sameWorkWorker = await forkOwn('./same-work-floor/worker', stack, (m) => {
    if (m.tokenRequests !== undefined) sameWorkTokens = m.tokenRequests;
  });
  const sameWorkServer = await forkOwn('./same-work-floor/server', stack);
  const own = [...floorWorkers, sameWorkWorker, sameWorkServer];

  say(`onboarding ${settings.people} people...`);
  const people = await onboardPeople(
    { api: stack.api, apiKey: API_KEY, sandbox: stack.sandbox },
    settings.people,
    { concurrency: 16 },
  );

  const close = async () => {
    await Promise.all(own.map((p) => p.stop()));
    await connection.close();
    await pool.end();
    await stack.stop();
  };
  let turn = 0;
  const api = () => stack.apis[turn++ % stack.apis.length] as string;
  return {
    stack,
    config,
    client,
    pool,
    people,
    floorDone,
    ownPids: {
      'floor-worker': floorWorkers.map((w) => w.pid),
      'same-work-worker': [sameWorkWorker.pid],
      'same-work-server': [sameWorkServer.pid],
    },
    sameWorkUrl: sameWorkServer.url,
    sameWorkTokenRequests: () => sameWorkTokens,
    api,
    close,
  };
}

/** How long a part waited for the stack to go quiet, and how busy it was when it stopped waiting. */
export interface Settled {
  waitedMs: number;
  /** The stack's CPU over the last window, % of one core. */
  cpuPct: number;
  quiet: boolean;
}

/**
 * Waits until the stack uses under `quietPct`% of one core over a 5 s window, at most `maxMs`:
 * what an earlier part left running (flows it woke, looking themselves up) is not the next part's
 * load. The wait is kept with the part's figures.
 */
export async function settle(b: Bench, quietPct = 25, maxMs = 180_000): Promise<Settled> {
  const started = Date.now();
  const root = b.stack.child.pid as number;
  for (;;) {
    const before = cpuSnapshot(root, b.ownPids);
    await sleep(5_000);
    const after = cpuSnapshot(root, b.ownPids);
    const { bench: _bench, ...stack } = cpuMsBetween(before, after);
    const busyMs = Object.values(stack).reduce((sum, ms) => sum + ms, 0);
    const cpuPct = Math.round((busyMs / (after.at - before.at)) * 100);
    const waitedMs = Date.now() - started;
    if (cpuPct < quietPct || waitedMs >= maxMs) {
      say(
        `stack ${cpuPct < quietPct ? 'quiet' : 'still busy'} after ${Math.round(waitedMs / 1000)} s (${cpuPct}% of one core)`,
      );
      return { waitedMs, cpuPct, quiet: cpuPct < quietPct };
    }
  }
}

/**
 * A bench tool's whole life: a fresh stack and the bench's connections to it, `body`, then
 * everything stopped; the process exits 0, or 1 with the error printed.
 */
export function runOnFreshStack(body: (b: Bench) => Promise<void>): void {
  const run = async () => {
    const stack = await startStack();
    // A stack whose connections could not be made is stopped all the same.
    const b = await connect(stack).catch(async (err: unknown) => {
      await stack.stop();
      throw err;
    });
    try {
      await body(b);
    } finally {
      await b.close();
    }
  };
  run().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
