import type { DepositState } from '../contracts/deposit';
import type { OnboardingState } from '../contracts/onboarding';
import type { WithdrawalState } from '../contracts/withdrawal';

// What a flow's end says to another namespace's workflow through Nexus: statuses, ids, amounts,
// reason codes and times, nothing personal (no payer's name or CPF, no liveness link, no
// operator's address), so it crosses in the clear and a caller reads it with no pixflow key.
// The whole final state stays sealed in pixflow's history and readable through the API. Run in
// the workflow sandbox too (nexus/outcome-interceptor.ts): types only.

/** An onboarding's end: `approved`, `rejected` or `expired`, and the reason codes. */
export type OnboardingOutcome = { flow: 'onboarding' } & Pick<
  OnboardingState,
  'status' | 'reasons' | 'startedAt' | 'updatedAt' | 'finishedAt'
>;

/**
 * A deposit's end (`completed`, `expired`, `to_return`, `refused`...), with the payment's E2E id
 * and time, and the version of the rules it was screened under.
 */
export type DepositOutcome = { flow: 'deposit'; e2eId?: string; paidAt?: string } & Pick<
  DepositState,
  | 'status'
  | 'txid'
  | 'amountCentavos'
  | 'reason'
  | 'policyVersion'
  | 'brandPolicyVersion'
  | 'startedAt'
  | 'updatedAt'
  | 'finishedAt'
>;

/**
 * A withdrawal's end (`completed` with its receipt stored, `failed`, `stuck`, `refused`), and the
 * version of the rules it was decided under.
 */
export type WithdrawalOutcome = { flow: 'withdrawal' } & Pick<
  WithdrawalState,
  | 'status'
  | 'transactionId'
  | 'amountCentavos'
  | 'reason'
  | 'policyVersion'
  | 'brandPolicyVersion'
  | 'e2eId'
  | 'paidAt'
  | 'receiptStored'
  | 'startedAt'
  | 'updatedAt'
  | 'finishedAt'
>;

export type FlowOutcome = OnboardingOutcome | DepositOutcome | WithdrawalOutcome;

/** Drops the fields left unset, as JSON would. */
const defined = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

export const onboardingOutcome = (s: OnboardingState): OnboardingOutcome =>
  defined({
    flow: 'onboarding',
    status: s.status,
    reasons: s.reasons,
    startedAt: s.startedAt,
    updatedAt: s.updatedAt,
    finishedAt: s.finishedAt,
  });

export const depositOutcome = (s: DepositState): DepositOutcome =>
  defined({
    flow: 'deposit',
    status: s.status,
    txid: s.txid,
    amountCentavos: s.amountCentavos,
    reason: s.reason,
    policyVersion: s.policyVersion,
    brandPolicyVersion: s.brandPolicyVersion,
    e2eId: s.payment?.e2eId,
    paidAt: s.payment?.paidAt,
    startedAt: s.startedAt,
    updatedAt: s.updatedAt,
    finishedAt: s.finishedAt,
  });

export const withdrawalOutcome = (s: WithdrawalState): WithdrawalOutcome =>
  defined({
    flow: 'withdrawal',
    status: s.status,
    transactionId: s.transactionId,
    amountCentavos: s.amountCentavos,
    reason: s.reason,
    policyVersion: s.policyVersion,
    brandPolicyVersion: s.brandPolicyVersion,
    e2eId: s.e2eId,
    paidAt: s.paidAt,
    receiptStored: s.receiptStored,
    startedAt: s.startedAt,
    updatedAt: s.updatedAt,
    finishedAt: s.finishedAt,
  });

/** The outcome of a flow's final state, by its workflow type; undefined for other workflows. */
export function outcomeOfWorkflow(workflowType: string, state: unknown): FlowOutcome | undefined {
  switch (workflowType) {
    case 'onboardingWorkflow':
      return onboardingOutcome(state as OnboardingState);
    case 'depositWorkflow':
    case 'heldDepositWorkflow':
      return depositOutcome(state as DepositState);
    case 'withdrawalWorkflow':
      return withdrawalOutcome(state as WithdrawalState);
    default:
      return undefined;
  }
}
