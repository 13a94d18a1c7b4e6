import { describe, expect, it } from 'vitest';
import { actionsFigure } from '../../bench/figures';
import type { HistorySizes } from '../../bench/steps/cost';

// The run counts what Temporal bills its own flows, from the histories its cost steps left.

const sizes = (actionsMax?: number): HistorySizes => ({
  sampled: 30,
  bytesP50: 5000,
  bytesMax: 5300,
  eventsP50: 16,
  eventsMax: 17,
  ...(actionsMax === undefined ? {} : { actionsP50: actionsMax - 1, actionsMax }),
});

describe("the run's own count of billed actions", () => {
  it('passes at the goal and fails past it, judged by the costliest history', () => {
    const [at] = actionsFigure(sizes(6), 6, 'a paid deposit');
    expect(at).toMatchObject({
      name: 'Temporal actions a paid deposit is billed (max of 30)',
      value: 6,
      pass: true,
    });
    expect(at?.ratio).toContain('p50 5');
    const [over] = actionsFigure(sizes(9), 8, 'a plain payout');
    expect(over).toMatchObject({ value: 9, goal: '≤ 8', pass: false });
  });

  it('says nothing for a run from before the count', () => {
    expect(actionsFigure(sizes(), 6, 'a paid deposit')).toEqual([]);
    expect(actionsFigure(undefined, 6, 'a paid deposit')).toEqual([]);
  });
});
