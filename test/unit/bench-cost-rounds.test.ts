import { describe, expect, it } from 'vitest';
import { type FlowCost, medianCost } from '../../bench/steps/cost';

const costed = (stackMsPerFlow: number, perFlow: Record<string, number>, p99: number): FlowCost => ({
  flow: 'deposit',
  rate: 5,
  completed: 200,
  seconds: 40,
  cpuMs: Object.fromEntries(Object.entries(perFlow).map(([k, v]) => [k, v * 200])),
  cpuMsPerFlow: perFlow,
  stackMsPerFlow,
  answers: { n: 200, p50: p99 / 2, p99, max: p99 + 10 },
  history: { sampled: 10, bytesP50: 5000, bytesMax: 5100, eventsP50: 17, eventsMax: 17 },
  stealPct: 2,
});

describe('a flow over the cost rounds', () => {
  it('takes each process its own median, and the answers of the round whose stack cost the median', () => {
    const m = medianCost([
      costed(190, { api: 37, postgres: 26 }, 170),
      costed(150, { api: 30, postgres: 60 }, 120),
      costed(160, { api: 34, postgres: 8 }, 140),
    ]);
    // Postgres's autovacuum landed on the second round: the median leaves it out.
    expect(m.cpuMsPerFlow).toEqual({ api: 34, postgres: 26 });
    expect(m.stackMsPerFlow).toBe(160);
    expect(m.cpuMs.postgres).toBe(26 * 200);
    expect(m.answers.p99).toBe(140);
  });

  it('counts a process one round lacks as 0 there', () => {
    const m = medianCost([
      costed(1, { api: 1 }, 1),
      costed(2, { api: 2, other: 3 }, 2),
      costed(3, { api: 3 }, 3),
    ]);
    expect(m.cpuMsPerFlow).toEqual({ api: 2, other: 0 });
  });

  it('gives a single round as it is', () => {
    const one = costed(190, { api: 37 }, 170);
    expect(medianCost([one])).toBe(one);
  });
});
