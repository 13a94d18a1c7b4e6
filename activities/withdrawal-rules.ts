import { ApplicationFailure } from '@temporalio/activity';
import { maskCpf } from '../common/mask';
import { biometricStepUpUpdate } from '../contracts/biometrics';
import { payeeOf, pixKeyKey } from '../contracts/customer';
import { DEFAULT_BRAND, type FlowRecord, type FlowTimings } from '../contracts/flow';
import { parseCompositeAccountKey } from '../contracts/pix-key';
import type { PayoutControls, WithdrawalRefusal } from '../contracts/rules';
import { BIOMETRICS_UNAVAILABLE, type StepUpCause, type WithdrawalInput } from '../contracts/withdrawal';
import { knowsCustomer, meetCustomer } from '../db/customer-brands';
import { type CustomerRow, lockCustomer, payoutsToday } from '../db/customers';
import { payoutStandingOf } from '../db/payout-destinations';
import { inTransaction } from '../db/pool';
import { decidedUnder } from '../policy/brand';
import type { Policy } from '../policy/schema';
import { askBiometrics, BiometricsUnavailableError } from '../starters/biometrics';
import type { ActivityDeps } from './deps';
import { upsertFlowRow } from './flows';
import { kycReasonsOf, readKyc } from './kyc';

// The money rules a withdrawal passes before anything is sent (docs/rules.md), and the
// biometric step-up some withdrawals wait for.

/**
 * What the money rules say of a withdrawal before anything is sent: refused with a reason code
 * (a WithdrawalRefusal or a KYC reason code), sent at once, or sent after a biometric step-up.
 */
export type PayoutVerdict =
  | { verdict: 'refused'; reason: WithdrawalRefusal | string }
  | { verdict: 'send' }
  | { verdict: 'step_up'; cause: StepUpCause };

/**
 * The verdict, with the payout controls the withdrawal runs under from then on and the version
 * of the policy both were taken under (docs/policy.md).
 */
export type PayoutRulesAnswer = PayoutVerdict & {
  controls: PayoutControls;
  policyVersion: number;
  /** The brand's overrides' version laid on the operator's, when the brand has one. */
  brandPolicyVersion?: number;
};

/** The link a withdrawal's step-up hands the person (its QR image stays in the biometrics flow). */
export interface StepUpLink {
  biometricsWorkflowId: string;
  url: string;
  issuedAt: string;
  expiresAt: string;
}

const payeeOfInput = (input: WithdrawalInput) =>
  payeeOf(input.client.cpf, input.pixKey, input.pixType, parseCompositeAccountKey);

/** The keyed hash a payout's destination is known by (registered accounts, destinations paid). */
export function payeeHashOf(input: WithdrawalInput, hashAccount: (key: string) => string): string {
  const payee = payeeOfInput(input);
  return hashAccount(payee.kind === 'bank_account' ? payee.key : pixKeyKey(input.pixKey, input.pixType));
}

/** The payout controls a withdrawal runs under, from the policy in force. */
export function payoutControlsOf(policy: Policy, askAuthorization: boolean): PayoutControls {
  const { deadlineMs, atRiskShare, approvalAboveCentavos, approvers } = policy.payouts;
  return { deadlineMs, atRiskShare, approvalAboveCentavos, approvers, askAuthorization };
}

/**
 * The person's standing for a payout, as the withdrawal's brand sees it: a person the brand never
 * onboarded is not verified to it, whoever else did (docs/brands.md, "People a brand knows"). A
 * payout the rules let through without verification (where the policy allows it) makes the person
 * the brand's customer, as such a deposit does.
 */
async function standingAtBrand(
  pool: ActivityDeps['pool'],
  cpfHash: string,
  payeeHash: string,
  brand?: string,
) {
  const [standing, known] = await Promise.all([
    payoutStandingOf(pool, cpfHash, payeeHash),
    knowsCustomer(pool, cpfHash, brand ?? DEFAULT_BRAND),
  ]);
  return { ...standing, known, verified: known && standing.customer?.verification === 'approved' };
}

/** KYC reason codes when the person's registry check no longer passes; read again when old. */
async function kycRefusal(
  deps: Pick<ActivityDeps, 'provider' | 'pool' | 'hashCpf' | 'clock'>,
  rules: Policy['withdrawals'],
  input: WithdrawalInput,
  workflowId: string,
  kyc: CustomerRow['kyc'],
) {
  const age = kyc.readAt ? deps.clock().getTime() - Date.parse(kyc.readAt) : Number.POSITIVE_INFINITY;
  if (age <= rules.kycMaxAgeMs) return kycReasonsOf(kyc);
  const fresh = await readKyc(deps, { workflowId, cpf: input.client.cpf, plan: 'plan_basic' });
  return fresh.reasons;
}

export function createWithdrawalRuleActivities({
  provider,
  pool,
  hashCpf,
  hashAccount,
  clock,
  temporal,
  policy,
  payoutAuthorization,
}: ActivityDeps) {
  /**
   * Checks the money rules (docs/rules.md) before anything is sent, in order: the person is verified
   * and known to the withdrawal's brand (docs/brands.md), their KYC answer is recent (read again
   * when older than kycMaxAgeMs) and passes, the payee is theirs, and the payout fits the daily
   * limit, checked with the withdrawal's row (`validating`) written in one transaction holding the
   * person's row locked: two withdrawals of one person are counted one after the other, each from
   * then on unless refused or failed. Idempotent: a retry leaves its own row out of the sum.
   */
  async function verdictOf(
    rules: Policy['withdrawals'],
    input: WithdrawalInput,
    validating: FlowRecord,
  ): Promise<PayoutVerdict> {
    const cpfHash = hashCpf(input.client.cpf);
    const refused = (reason: string): PayoutVerdict => ({ verdict: 'refused', reason });
    const payee = payeeOfInput(input);
    const standing = await standingAtBrand(pool, cpfHash, payeeHashOf(input, hashAccount), input.brand);
    const { customer } = standing;
    if (rules.requireVerified) {
      if (!standing.verified || !customer) return refused('not_verified');
      const kyc = await kycRefusal(
        { provider, pool, hashCpf, clock },
        rules,
        input,
        validating.workflowId,
        customer.kyc,
      );
      if (kyc.length > 0) return refused(kyc.join(','));
    }
    const registered = (payee.kind === 'pix_key' || payee.kind === 'bank_account') && standing.registered;
    if (rules.requireOwnPayeeAccount && payee.kind !== 'own_cpf' && !registered)
      return refused('payee_not_owner');

    const fits = await inTransaction(pool, async (client) => {
      await lockCustomer(client, cpfHash, maskCpf(input.client.cpf), { exists: customer !== undefined });
      const today = await payoutsToday(client, cpfHash, clock(), validating.workflowId);
      if (today.totalCentavos + input.amountCentavos > rules.dailyLimitCentavos) return false;
      await upsertFlowRow(client, validating, { hashCpf, clock });
      if (!standing.known) await meetCustomer(client, cpfHash, input.brand ?? DEFAULT_BRAND);
      return true;
    });
    if (!fits) return refused('limit_exceeded');

    if (rules.stepUpAboveCentavos > 0 && input.amountCentavos > rules.stepUpAboveCentavos) {
      return { verdict: 'step_up', cause: 'amount_above_step_up' };
    }
    if (rules.stepUpNewAccount && payee.kind !== 'own_cpf' && !standing.paidBefore) {
      return { verdict: 'step_up', cause: 'first_payout_to_account' };
    }
    return { verdict: 'send' };
  }

  return {
    /**
     * The money rules' verdict (verdictOf) under the brand's policy in force, read once, with its
     * payout controls (the brand's, where it sets them) and its versions: the withdrawal keeps them
     * from here on, whatever version comes next.
     */
    async checkPayoutRulesAndRecordValidating(
      input: WithdrawalInput,
      validating: FlowRecord,
    ): Promise<PayoutRulesAnswer> {
      const inForce = await policy.current(input.brand);
      return {
        ...(await verdictOf(inForce.policy.withdrawals, input, validating)),
        controls: payoutControlsOf(inForce.policy, payoutAuthorization !== undefined),
        ...decidedUnder(inForce),
      };
    },

    /**
     * Asks for the person's biometric identification on the withdrawal's behalf: a link issued
     * no earlier than the withdrawal was asked (a new one if the open link is older), whose
     * outcome the biometrics flow signals to the withdrawal. The provider giving no link is a
     * non-retryable failure.
     */
    async requestStepUp(ask: {
      cpf: string;
      waiter: string;
      askedAt: string;
      timings?: Partial<FlowTimings>;
    }): Promise<StepUpLink> {
      try {
        const { link, workflowId } = await askBiometrics(temporal.client, {
          cpf: ask.cpf,
          cpfHash: hashCpf(ask.cpf),
          taskQueue: temporal.taskQueue,
          timings: ask.timings,
          update: biometricStepUpUpdate,
          args: [{ waiter: ask.waiter, askedAt: ask.askedAt }],
        });
        const { url, issuedAt, expiresAt } = link;
        return { biometricsWorkflowId: workflowId, url, issuedAt, expiresAt };
      } catch (err) {
        if (err instanceof BiometricsUnavailableError) {
          throw ApplicationFailure.create({
            type: BIOMETRICS_UNAVAILABLE,
            message: err.message,
            nonRetryable: true,
          });
        }
        throw err;
      }
    },
  };
}
