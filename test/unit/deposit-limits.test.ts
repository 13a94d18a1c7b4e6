import { describe, expect, it } from 'vitest';
import { changedLimit, limitInForce } from '../../customers/deposit-limits';

// How a person's asked deposit limit becomes the limit in force or a pending change.

const now = new Date('2026-11-21T14:00:00.000Z');
const DAY = 86_400_000;
const later = (ms: number) => new Date(now.getTime() + ms);

describe('changedLimit', () => {
  it('applies a first limit, a lower one or the same one at once, dropping a pending change', () => {
    expect(changedLimit({ limitCentavos: null, pending: null }, 10_000, now, DAY)).toEqual({
      limitCentavos: 10_000,
      pending: null,
    });
    const raising = { limitCentavos: 10_000, pending: { limitCentavos: 50_000, appliesAt: later(DAY) } };
    expect(changedLimit(raising, 5_000, now, DAY)).toEqual({ limitCentavos: 5_000, pending: null });
    expect(changedLimit(raising, 10_000, now, DAY)).toEqual({ limitCentavos: 10_000, pending: null });
    expect(changedLimit({ limitCentavos: 10_000, pending: null }, 0, now, DAY)).toEqual({
      limitCentavos: 0,
      pending: null,
    });
  });

  it('keeps a higher limit, or removing one, pending for the cooling-off', () => {
    const current = { limitCentavos: 10_000, pending: null };
    expect(changedLimit(current, 20_000, now, DAY)).toEqual({
      limitCentavos: 10_000,
      pending: { limitCentavos: 20_000, appliesAt: later(DAY) },
    });
    expect(changedLimit(current, null, now, DAY)).toEqual({
      limitCentavos: 10_000,
      pending: { limitCentavos: null, appliesAt: later(DAY) },
    });
  });

  it('keeps the time of the same pending change asked again, and restarts it for another one', () => {
    const pending = { limitCentavos: 10_000, pending: { limitCentavos: 20_000, appliesAt: later(1_000) } };
    expect(changedLimit(pending, 20_000, now, DAY)).toBe(pending);
    expect(changedLimit(pending, 30_000, now, DAY).pending).toEqual({
      limitCentavos: 30_000,
      appliesAt: later(DAY),
    });
  });

  it('removing no limit leaves none', () => {
    expect(changedLimit({ limitCentavos: null, pending: null }, null, now, DAY)).toEqual({
      limitCentavos: null,
      pending: null,
    });
  });
});

describe('limitInForce', () => {
  it('is the pending change once its time has come, and not before', () => {
    const row = { limitCentavos: 10_000, pending: { limitCentavos: null, appliesAt: later(1_000) } };
    expect(limitInForce(row, now)).toBe(row);
    expect(limitInForce(row, later(1_000))).toEqual({ limitCentavos: null, pending: null });
    expect(limitInForce(undefined, now)).toEqual({ limitCentavos: null, pending: null });
  });
});
