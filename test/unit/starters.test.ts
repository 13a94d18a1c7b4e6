import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { depositOperations } from '../../api/deposits';
import { onboardingOperations } from '../../api/onboardings';
import { withdrawalOperations } from '../../api/withdrawals';
import { DEPOSIT_FAILED, DEPOSIT_REFUSED, type DepositRefusal } from '../../contracts/deposit';
import { depositRefusalReasons } from '../../contracts/reasons';
import { SCOPES } from '../../nexus/handlers';
import { depositRefusalTypes, describeDepositRefusal, flowRefusal } from '../../starters/deposit';

// What the starters make of a flow's refusal, and how it is said to a caller through the API and
// Nexus alike (the type a caller branches on, the words, the fields).

const refusals: DepositRefusal[] = [
  { reason: 'not_verified', verification: 'pending' },
  { reason: 'impeded', impeded: { reason: 'court_order', since: '2026-11-01T00:00:00.000Z', until: null } },
  { reason: 'closed' },
  {
    reason: 'deposit_limit_exceeded',
    exceeded: ['daily'],
    remainingCentavos: { daily: 5_000, weekly: 85_000 },
  },
  { reason: 'eligibility_unavailable' },
];

describe("a deposit's refusal", () => {
  it('is read from the QR update the flow failed, with the policy version it was decided under', () => {
    const refused = ApplicationFailure.create({
      type: DEPOSIT_REFUSED,
      message: 'the rules refused the deposit: closed',
      details: [{ reason: 'closed', policyVersion: 4 }],
    });
    expect(flowRefusal(refused)).toEqual({ refused: { reason: 'closed' }, policyVersion: 4 });
    // The provider's refusal is not the rules': it stays the provider's words.
    const failed = ApplicationFailure.create({ type: DEPOSIT_FAILED, message: 'DUPLICATE_TRANSACTION' });
    expect(flowRefusal(failed)).toEqual({ failed: 'DUPLICATE_TRANSACTION' });
    // Anything else (a validator's rejection) is not a refusal: the starter says conflict.
    expect(flowRefusal(new Error('txid already used'))).toBeUndefined();
    expect(flowRefusal(undefined)).toBeUndefined();
  });

  it('has a type for every reason, the slugs the API has always answered', () => {
    expect(Object.keys(depositRefusalTypes).sort()).toEqual([...depositRefusalReasons].sort());
    expect(refusals.map((r) => describeDepositRefusal(r).type)).toEqual([
      'not-verified',
      'impeded',
      'customer-closed',
      'deposit-limit-exceeded',
      'eligibility-unavailable',
    ]);
  });

  it('says what the caller acts on, in fields that carry nothing personal', () => {
    const [notVerified, impeded, closed, overLimit, unavailable] = refusals.map(describeDepositRefusal);
    expect(notVerified?.fields).toEqual({ verification: 'pending' });
    expect(notVerified?.detail).toMatch(/once it is approved/);
    expect(impeded?.fields).toEqual({
      impeded: { reason: 'court_order', since: '2026-11-01T00:00:00.000Z', until: null },
    });
    expect(impeded?.detail).toMatch(/court_order/);
    expect(closed?.fields).toEqual({});
    expect(overLimit?.fields).toEqual({
      exceeded: ['daily'],
      remainingCentavos: { daily: 5_000, weekly: 85_000 },
    });
    expect(overLimit?.detail).toMatch(/daily deposit limit; left: daily R\$\s?50,00, weekly R\$\s?850,00/);
    expect(unavailable?.detail).toMatch(/new txid/);
  });
});

describe('the Nexus operations', () => {
  it('need the scopes of the API routes they stand for', () => {
    expect(SCOPES.startOnboarding).toEqual(onboardingOperations.start.scopes);
    expect(SCOPES.createDeposit).toEqual(depositOperations.create.scopes);
    expect(SCOPES.requestWithdrawal).toEqual(withdrawalOperations.send.scopes);
    expect(SCOPES.onboardingState).toEqual(onboardingOperations.state.scopes);
    expect(SCOPES.depositState).toEqual(depositOperations.state.scopes);
    expect(SCOPES.withdrawalState).toEqual(withdrawalOperations.state.scopes);
  });
});
