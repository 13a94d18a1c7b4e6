import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import pg from 'pg';
import { pixflowDataConverter } from '../common/codec';
import { type Config, loadConfig } from '../common/config';
import { workerTuningOptions } from '../common/worker-tuning';
import { onboardPeople, type People } from '../scripts/people';
import { FLOOR_QUEUE, say, settings } from './settings';
import { API_KEY, type BenchStack, startBenchStack } from './stack';

// Set-up and teardown of a run: pixflow's stack, and the bench's own connections to it (a
// Temporal client, a Postgres pool on the flows table, and the workers that run the floor).

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
  /** The API to send the next request to: each of the stack's in turn. */
  api(): string;
  /** Stops the floor workers, closes the connections, then stops the stack. */
  close(): Promise<void>;
}

/**
 * pixflow's stack on free ports, with the settings the bench needs and `args` (a production
 * run's `npm start` options). Everything else is the stack's production default: the QR's 30 minutes, the
 * reconciliation's schedule and rates.
 */
export function startStack(args: string[] = []): Promise<BenchStack> {
  return startBenchStack(
    {
      LOG_LEVEL: 'warn',
      // The bench is one client offering far more than a real one: the per-key limit would answer 429.
      API_RATE_LIMIT_PER_MINUTE: '0',
    },
    240_000,
    args,
  );
}

let runtimeInstalled = false;

/**
 * The bench's connections to a stack, `floorWorkers` workers for the floor (as many as the
 * stack has of its own), and `people` onboarded people.
 */
export async function connect(stack: BenchStack, opts: { floorWorkers?: number } = {}): Promise<Bench> {
  const config = loadConfig(stack.env);
  const dataConverter = pixflowDataConverter(config.codecKeys);
  const connection = await Connection.connect({ address: stack.temporalAddress });
  const client = new Client({ connection, namespace: config.TEMPORAL_NAMESPACE, dataConverter });
  const pool = new pg.Pool({ connectionString: stack.databaseUrl, max: 4 });
  pool.on('error', () => {}); // Postgres stops with the stack at the end

  // Errors only: the signal sinks, terminated with workflow tasks still running, make the SDK's
  // core warn once for each of those tasks.
  if (!runtimeInstalled) {
    Runtime.install({
      logger: new DefaultLogger('WARN'),
      telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' }, console: {} } },
    });
  }
  runtimeInstalled = true;
  const floorDone = new Map<string, number>();
  const nativeConnection = await NativeConnection.connect({ address: stack.temporalAddress });
  const floorWorkers = await Promise.all(
    Array.from({ length: opts.floorWorkers ?? 1 }, () =>
      Worker.create({
        connection: nativeConnection,
        namespace: config.TEMPORAL_NAMESPACE,
        taskQueue: FLOOR_QUEUE,
        workflowsPath: require.resolve('./floor-workflow'),
        activities: {
          async noop() {},
          async done(id: string) {
            floorDone.set(id, Date.now());
          },
        },
        dataConverter,
        // The same worker settings as pixflow's worker.
        ...workerTuningOptions(config),
      }),
    ),
  );
  const floorRuns = floorWorkers.map((w) => w.run());

  say(`onboarding ${settings.people} people...`);
  const people = await onboardPeople(
    { api: stack.api, apiKey: API_KEY, sandbox: stack.sandbox },
    settings.people,
  );

  const close = async () => {
    for (const w of floorWorkers) w.shutdown();
    await Promise.all(floorRuns);
    await nativeConnection.close();
    await connection.close();
    await pool.end();
    await stack.stop();
  };
  let turn = 0;
  const api = () => stack.apis[turn++ % stack.apis.length] as string;
  return { stack, config, client, pool, people, floorDone, api, close };
}
