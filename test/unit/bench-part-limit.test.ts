import { describe, expect, it } from 'vitest';
import { PART_LIMIT_MINUTES, PARTS, withinLimit } from '../../bench/settings';

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

  it('gives every part a limit longer than a full run takes it', () => {
    for (const part of PARTS) expect(PART_LIMIT_MINUTES[part], part).toBeGreaterThanOrEqual(20);
    // The peak offers for 20 minutes twice and waits up to 15 for the last payments.
    expect(PART_LIMIT_MINUTES.peak).toBeGreaterThan(2 * 20 + 15);
  });
});
