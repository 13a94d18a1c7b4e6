import { describe, expect, it } from 'vitest';
import { PARTS, partLimitMinutes, settings, withinLimit } from '../../bench/settings';

// A bench part that hangs (a wedged server) is given up at its limit, so the run still writes
// the figures of every other part.

describe('a bench part’s time limit', () => {
  it('gives the work’s result when it comes first', async () => {
    await expect(withinLimit(Promise.resolve('done'), 1_000, 'cost')).resolves.toBe('done');
  });

  it('passes on the work’s own failure', async () => {
    await expect(withinLimit(Promise.reject(new Error('boom')), 1_000, 'cost')).rejects.toThrow('boom');
  });

  it('fails, naming the part, when the work outlasts it', async () => {
    const never = new Promise<string>(() => {});
    await expect(withinLimit(never, 30, 'ingress')).rejects.toThrow('ingress gave no result within');
  });

  it('gives every part a limit longer than this run’s settings take it', () => {
    for (const part of PARTS) expect(partLimitMinutes(part), part).toBeGreaterThanOrEqual(20);
    // The peak offers twice (the same-work floor's, then pixflow's) and waits for the last payments.
    const { ms, sameWorkMs, detectWaitMs } = settings.peak;
    expect(partLimitMinutes('peak')).toBeGreaterThan((ms + sameWorkMs + detectWaitMs) / 60_000);
    expect(partLimitMinutes('peak')).toBeGreaterThan(2 * 20 + 15);
    // A full run's 20 minutes of capacity a round (when asked for), 5 cost steps of 30 s a round.
    expect(partLimitMinutes('capacity')).toBeGreaterThan(20 * Math.max(1, settings.capacity.rounds));
    expect(partLimitMinutes('cost')).toBeGreaterThan(
      (settings.cost.rounds * 5 * settings.cost.stepMs) / 60_000,
    );
  });
});
