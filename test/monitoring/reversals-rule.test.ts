import { describe, expect, it } from 'vitest';
import { isReversal } from '../../activities/deposit-reversals';
import { depositReturnId } from '../../contracts/deposit';
import type { Movement } from '../../db/alerts';
import { reversals } from '../../monitoring/rules';

// The `reversals` rule (docs/monitoring.md) and which returns of a deposit's Pix are reversals:
// the rule's own decisions, beside the end-to-end run in test/workflows/deposit-reversals.test.ts.

const deposit: Movement = {
  workflowId: 'deposit-1',
  type: 'deposit',
  status: 'completed',
  cpfHash: 'h',
  cpfMasked: '***.456.789-**',
  amountCentavos: 10_000,
  at: new Date('2026-11-28T04:00:00Z'),
};
const reversal = (over: Partial<Parameters<typeof reversals>[1][number]> = {}) => ({
  returnId: 'D1',
  nature: 'med_fraud',
  amountCentavos: 4_000,
  firstSeenAt: '2026-11-28T05:00:00.000Z',
  ...over,
});

describe('the reversals rule', () => {
  it('alerts on the first reversal of a deposit, with its nature, amount and extent', () => {
    expect(reversals(deposit, [reversal()])).toEqual({
      rule: 'reversals',
      flowIds: ['deposit-1'],
      facts: {
        at: '2026-11-28T05:00:00.000Z',
        nature: 'med_fraud',
        reversedCentavos: 4_000,
        depositCentavos: 10_000,
        reversals: 1,
        partial: 'partial',
        returnId: 'D1',
      },
    });
  });

  it('counts every reversal so far, the last one named, whole once together they took all of it', () => {
    const f = reversals(deposit, [
      reversal(),
      reversal({ returnId: 'D2', nature: 'med_operational', amountCentavos: 6_000 }),
    ]);
    expect(f?.facts).toMatchObject({
      reversals: 2,
      reversedCentavos: 10_000,
      nature: 'med_operational',
      partial: 'whole',
    });
  });

  it('finds nothing without a reversal, or for a payout', () => {
    expect(reversals(deposit, [])).toBeUndefined();
    expect(reversals({ ...deposit, type: 'withdrawal' }, [reversal()])).toBeUndefined();
  });
});

describe('a reversal', () => {
  it('is any MED return, and any return whose id is not the one pixflow asked for', () => {
    for (const nature of ['med_operational', 'med_fraud', 'med_automatic'] as const)
      expect(isReversal({ nature, returnId: 'own' }, '123', 'own')).toBe(true);
    expect(isReversal({ nature: 'original', returnId: 'theirs' }, '123', 'own')).toBe(true);
    expect(isReversal({ nature: 'original', returnId: 'theirs' }, '123')).toBe(true);
    expect(isReversal({ nature: 'original', returnId: 'own' }, '123', 'own')).toBe(false);
  });

  it("is never pixflow's own return of the deposit, even before the deposit's row names it", () => {
    expect(isReversal({ nature: 'original', returnId: depositReturnId('123') }, '123')).toBe(false);
    expect(isReversal({ nature: 'original', returnId: depositReturnId('124') }, '123')).toBe(true);
  });
});
