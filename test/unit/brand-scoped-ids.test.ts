import { describe, expect, it } from 'vitest';
import { DEFAULT_BRAND as KEYS_DEFAULT_BRAND } from '../../api-keys/acting-brand';
import { BRAND_ID_PATTERN, DEFAULT_BRAND_ID } from '../../contracts/brand';
import { depositReturnWorkflowId, depositWorkflowId } from '../../contracts/deposit';
import { depositReversalsWorkflowId } from '../../contracts/deposit-reversal';
import { brandScopedId, DEFAULT_BRAND } from '../../contracts/flow';
import { txidSchema } from '../../contracts/flow-input';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { transactionIdSchema } from '../../contracts/withdrawal-input';

// A deposit's and a withdrawal's workflow ids, scoped by the brand they belong to
// (contracts/flow.ts brandScopedId): the default brand's as they were before brands, another
// brand's never meeting a default id, another brand's or another kind of flow's.

const TXID = '20261128000000000000000000000001';

describe('workflow ids scoped by brand', () => {
  it("keeps the default brand's ids exactly as before brands, named or not", () => {
    for (const brand of [undefined, DEFAULT_BRAND]) {
      expect(depositWorkflowId(TXID, brand)).toBe(`deposit-${TXID}`);
      expect(depositReturnWorkflowId(TXID, brand)).toBe(`deposit-return-${TXID}`);
      expect(depositReversalsWorkflowId(TXID, brand)).toBe(`deposit-reversals-${TXID}`);
      expect(withdrawalWorkflowId('payout-42', brand)).toBe('withdrawal-payout-42');
    }
  });

  it("puts another brand before the default id, so a deposit's return and reversals follow its brand", () => {
    expect(depositWorkflowId(TXID, 'bet-rio')).toBe(`bet-rio:deposit-${TXID}`);
    expect(depositReturnWorkflowId(TXID, 'bet-rio')).toBe(`bet-rio:deposit-return-${TXID}`);
    expect(depositReversalsWorkflowId(TXID, 'bet-rio')).toBe(`bet-rio:deposit-reversals-${TXID}`);
    expect(withdrawalWorkflowId('payout-42', 'bet-rio')).toBe('bet-rio:withdrawal-payout-42');
  });

  it('never gives two brands, or two kinds of flow, the same id, whatever the brands are called', () => {
    // Brands named like the kinds' own prefixes: with the brand after the kind
    // (`deposit-<brand>:<txid>`) `return-bet-rio`'s deposit would be bet-rio's return.
    const brands = [DEFAULT_BRAND, 'bet-rio', 'return-bet-rio', 'reversals-bet-rio', 'deposit', 'withdrawal'];
    const ids = brands.flatMap((brand) => [
      depositWorkflowId(TXID, brand),
      depositReturnWorkflowId(TXID, brand),
      depositReversalsWorkflowId(TXID, brand),
      withdrawalWorkflowId(TXID, brand),
      withdrawalWorkflowId('deposit-1', brand),
    ]);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('relies on `:` being in no brand id, txid or transactionId', () => {
    expect(BRAND_ID_PATTERN.test('bet:rio')).toBe(false);
    expect(txidSchema.safeParse('12:34').success).toBe(false);
    expect(transactionIdSchema.safeParse('a:b').success).toBe(false);
    // And so the brand of an id is all before its first `:`.
    const id = brandScopedId(withdrawalWorkflowId('a.b_c-d'), 'bet-rio');
    expect(id.slice(0, id.indexOf(':'))).toBe('bet-rio');
  });

  it("is the same default brand as the brand record's and the API keys'", () => {
    expect(DEFAULT_BRAND).toBe(DEFAULT_BRAND_ID);
    expect(DEFAULT_BRAND).toBe(KEYS_DEFAULT_BRAND);
  });
});
