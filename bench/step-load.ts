import type { Bench } from './harness';
import { busiestThreads, busyPctSince, cpuPercentBetween, cpuSnapshot, cpuTicks, threadTicks } from './proc';

// What the stack did while a step offered its load: the machine's CPU, each process's share of a
// core and the busiest threads of the worker and the API. Past a ramp's knee it tells what bounds
// saturation: the cores (the machine near 100%), one thread (near 100% of its core: the event
// loop, the workflow thread) or neither, which leaves a wait (a pool, a lock, a timer).

export interface StepLoad {
  /** The machine's CPU busy over the step, % of all its cores. */
  machineBusyPct: number;
  /** Each part of the stack's CPU, % of one core. */
  cpuPct: Record<string, number>;
  /** The serving processes' busiest threads, % of one core (`main`: the process's own thread). */
  threads: Record<string, { name: string; pct: number }[]>;
}

/**
 * Starts reading the stack's load; the function it returns ends the reading. Threads are read of
 * the processes that serve the ramp: pixflow's worker and API, or the same-work floor's.
 */
export function observeStepLoad(b: Bench, sameWork = false): () => StepLoad {
  const root = b.stack.child.pid as number;
  const pids = sameWork
    ? {
        'same-work-worker': b.ownPids['same-work-worker']?.[0] ?? -1,
        'same-work-server': b.ownPids['same-work-server']?.[0] ?? -1,
      }
    : { worker: b.stack.workerPid, api: b.stack.pidsOf('api')[0] ?? -1 };
  const cpu0 = cpuSnapshot(root, b.ownPids);
  const ticks0 = cpuTicks();
  const threads0 = Object.entries(pids).map(([part, pid]) => ({ part, pid, t: threadTicks(pid) }));
  return () => {
    const cpu1 = cpuSnapshot(root, b.ownPids);
    const seconds = (cpu1.at - cpu0.at) / 1000;
    const threads = Object.fromEntries(
      threads0.map(({ part, pid, t }) => [
        part,
        busiestThreads(t, threadTicks(pid), seconds, 3).map((x) => ({
          name: x.tid === pid ? 'main' : x.name,
          pct: x.pct,
        })),
      ]),
    );
    return { machineBusyPct: busyPctSince(ticks0), cpuPct: cpuPercentBetween(cpu0, cpu1), threads };
  };
}

/** One line: the machine, each process by its share, and each Node process's busiest thread. */
export function stepLoadText(l: StepLoad): string {
  const parts = Object.entries(l.cpuPct)
    // Under 1% of a core: the processes that serve another ramp, idle.
    .filter(([part, pct]) => part !== 'bench' && pct >= 1)
    .sort((a, b) => b[1] - a[1])
    .map(([part, pct]) => `${part} ${Math.round(pct)}%`);
  const threads = Object.entries(l.threads).map(
    ([part, ts]) =>
      `${part}'s busiest thread ${ts[0] ? `${ts[0].name} ${Math.round(ts[0].pct)}%` : 'unread'}`,
  );
  return `machine ${Math.round(l.machineBusyPct)}% busy; ${parts.join(', ')} (of one core); ${threads.join(', ')}`;
}
