import { describe, expect, it } from 'vitest';
import { saturationBoundFigures } from '../../bench/figures';
import type { ObservedPoint } from '../../bench/load';
import type { StepLoad } from '../../bench/step-load';
import { stepLoadText } from '../../bench/step-load';
import {
  repeated,
  SATURATION_KINDS,
  type Saturation,
  type SaturationRound,
} from '../../bench/steps/saturation';

// Past a ramp's knee the stack's load says what bounds saturation: the cores, one thread, or a wait.

const load = (machine: number, workflowThread: number): StepLoad => ({
  machineBusyPct: machine,
  cpuPct: { worker: 90, temporal: 70.4, api: 30, bench: 12, 'floor-worker': 0.4 },
  threads: {
    worker: [
      { name: 'workflow', pct: workflowThread },
      { name: 'main', pct: 40 },
    ],
    api: [{ name: 'main', pct: 28.6 }],
  },
});

function saturationOf(depositSaturations: number[], loads: StepLoad[]): Saturation {
  const rounds: SaturationRound[] = depositSaturations.map((sat, i) => {
    const points: ObservedPoint[] = [
      { offered: 8, achieved: 8 },
      { offered: 12, achieved: sat },
      { offered: 18, achieved: sat - 1, load: loads[i] },
    ];
    const ramp = { start: 8, points, saturation: sat };
    const plain = { start: 8, points: [{ offered: 8, achieved: 8 }], saturation: 8 };
    return {
      round: i + 1,
      ramps: {
        'same-work deposits': plain,
        deposits: ramp,
        'same-work withdrawals': plain,
        withdrawals: plain,
      },
      depositRatio: 1,
      withdrawalRatio: 1,
    };
  });
  const of = (k: (typeof SATURATION_KINDS)[number]) => repeated(rounds.map((r) => r.ramps[k].saturation));
  return {
    rounds,
    saturation: Object.fromEntries(SATURATION_KINDS.map((k) => [k, of(k)])) as Saturation['saturation'],
    depositRatio: repeated([1, 1, 1]),
    withdrawalRatio: repeated([1, 1, 1]),
  };
}

describe('what bounds saturation', () => {
  it("reads the median round's first step beyond the knee, and only for ramps whose load was read", () => {
    const s = saturationOf([14, 11, 16], [load(99, 97), load(60, 30), load(88, 50)]);
    const figures = saturationBoundFigures(s);
    // Only the deposits' ramps carry a load here; their median round is the first (14/s).
    expect(figures).toHaveLength(1);
    expect(figures[0]?.name).toBe(
      "saturation: deposits beyond the knee, the machine's CPU busy (its median round: 1)",
    );
    expect(figures[0]?.value).toBe(99);
    expect(figures[0]?.ratio).toContain('18/s offered, 13/s completed');
    expect(figures[0]?.ratio).toContain("worker's busiest thread workflow 97%");
  });

  it('orders the processes by their share, leaving out the bench and the idle', () => {
    expect(stepLoadText(load(72.4, 55))).toBe(
      "machine 72% busy; worker 90%, temporal 70%, api 30% (of one core); worker's busiest thread workflow 55%, api's busiest thread main 29%",
    );
  });
});
