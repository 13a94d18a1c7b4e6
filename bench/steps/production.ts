import { connect, startStack } from '../harness';
import { setAuto } from '../pixflow';
import { stackProcesses } from '../proc';
import { say, settings } from '../settings';
import type { BenchStack } from '../stack';
import { round } from '../stats';
import { type DepositRamp, depositRamp } from './deposits';
import { type FloorRamp, floorRamp } from './floor';
import { readDepositShape } from './shape';

// Deposits on the production Temporal server (on Postgres, not the dev server's SQLite), with 1
// and with 2 worker and API processes, each next to the floor on the same server: a stack of
// its own for each, started by `npm start` with the options of `settings.production.argsTemplate`
// (`--temporal postgres --workers n --apis n`). The bench's requests take the APIs in turn.

export interface ProductionRun {
  processes: number;
  /** Why this run measured nothing, when it did not. */
  notRun?: string;
  /** Processes of each part the stack was seen running. */
  seen?: Record<string, number>;
  floor?: FloorRamp;
  deposits?: DepositRamp;
  /** Deposits' saturation over the floor's on the same server. */
  ratio?: number;
}

export interface Production {
  notRun?: string;
  runs: ProductionRun[];
}

/** `--x {n}` with n processes, as `npm start` options. */
export function productionArgs(template: string, n: number): string[] {
  return template
    .split(/\s+/)
    .filter(Boolean)
    .map((a) => a.replaceAll('{n}', String(n)));
}

/** Why a stack is not the production one asked for, or undefined when it is. */
function notProduction(stack: BenchStack, n: number, seen: Record<string, number>): string | undefined {
  const procs = stackProcesses(stack.child.pid as number);
  if ((procs.get('temporal') ?? []).some((p) => p.cmd.includes('start-dev'))) {
    return 'not run: production server not available (`npm start` ran the dev server with these options)';
  }
  if (!seen.temporal)
    return 'not run: production server not available (no Temporal process under `npm start`)';
  if (seen.worker !== n || seen.api !== n || stack.apis.length !== n) {
    return `not run: asked for ${n} workers and APIs, \`npm start\` ran ${seen.worker ?? 0} and ${seen.api ?? 0}`;
  }
  return undefined;
}

async function productionRun(n: number): Promise<ProductionRun> {
  const args = productionArgs(settings.production.argsTemplate, n);
  say(`production server, ${n} worker(s) and API(s): npm start -- ${args.join(' ')}...`);
  const stack = await startStack(args);
  const seen = Object.fromEntries(
    [...stackProcesses(stack.child.pid as number)].map(([part, ps]) => [part, ps.length]),
  );
  const why = notProduction(stack, n, seen);
  if (why) {
    await stack.stop();
    say(`   ${why}`);
    return { processes: n, notRun: why, seen };
  }
  const b = await connect(stack, { floorWorkers: n });
  try {
    await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);
    const { shape } = await readDepositShape(b);
    const floor = await floorRamp(b, shape);
    const deposits = await depositRamp(b);
    const ratio = floor.saturation > 0 ? round(deposits.saturation / floor.saturation) : Number.NaN;
    say(`   ${n}: deposits ${deposits.saturation}/s, floor ${floor.saturation}/s (${ratio})`);
    return { processes: n, seen, floor, deposits, ratio };
  } finally {
    await b.close();
  }
}

export async function production(): Promise<Production> {
  const runs: ProductionRun[] = [];
  for (const n of settings.production.processes) {
    const run = await productionRun(n);
    runs.push(run);
    // No use starting another stack to be told the same.
    if (run.notRun?.includes('production server not available')) break;
  }
  const notRun = runs.every((r) => r.notRun) ? runs[0]?.notRun : undefined;
  return { ...(notRun ? { notRun } : {}), runs };
}
