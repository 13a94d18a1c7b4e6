import { ApplicationFailure } from '@temporalio/common';
import { maskCpf } from '../common/mask';
import type { CustomerVerification } from '../contracts/customer';
import {
  DEPOSIT_ELIGIBILITY_UNAVAILABLE,
  type DepositInput,
  type DepositRefusal,
  depositWorkflowId,
  NOT_VERIFIED,
} from '../contracts/deposit';
import { CLOSED, DEPOSIT_LIMIT_EXCEEDED, IMPEDED } from '../contracts/rules';
import { reserveWithinDepositLimits } from '../customers/deposit-limits';
import {
  depositStandingOfHash,
  type EligibilityRecord,
  eligibilityOfHash,
  isClosed,
  recordEligibility,
} from '../db/eligibility';
import { EligibilityUnavailableError } from '../eligibility/registry';
import type { ActivityDeps } from './deps';

// What a new deposit must pass before anything is created at the provider (docs/rules.md): the
// person verified, not named by the registry of impeded people nor closed, and within the limits
// they set. Run by the deposit's flow in its first workflow task, so every refusal is a flow of
// its own: recorded with its reason and the version of the rules it was decided under.

/** The rules' verdict on a new deposit, and the version of the policy it was taken under. */
export type DepositScreening =
  | { verdict: 'pass'; policyVersion: number }
  | { verdict: 'refused'; policyVersion: number; refusal: DepositRefusal };

type Screening =
  | { status: 'eligible' }
  | { status: 'impeded'; reason: string; since: string; until: string | null }
  | { status: 'unavailable'; error: string };

export function createDepositScreeningActivities(
  deps: Pick<ActivityDeps, 'pool' | 'hashCpf' | 'clock' | 'policy' | 'eligibility' | 'sealCpf'>,
) {
  const { pool, hashCpf, clock } = deps;

  /**
   * The person's last registry answer while younger than `freshMs` (and its bar has not ended),
   * else the registry asked and its answer recorded on their row, as the rescreening does
   * (activities/screen-person.ts). A recorded impediment holds until an operator reinstates them.
   */
  async function screen(
    cpf: string,
    hash: string,
    last: EligibilityRecord | undefined,
    freshMs: number,
  ): Promise<Screening> {
    const registry = deps.eligibility;
    if (!registry) return { status: 'eligible' };
    const now = clock();
    // A bar whose end has passed is asked about again, however fresh.
    const lapsed =
      last?.registryAnswer === 'impeded' && last.impeded?.until
        ? Date.parse(last.impeded.until) <= now.getTime()
        : false;
    if (last && !lapsed && now.getTime() - last.checkedAt.getTime() < freshMs) {
      if (!last.impeded) return { status: 'eligible' };
      const { reason, since, until } = last.impeded;
      return { status: 'impeded', reason, since, until };
    }
    let answer: Awaited<ReturnType<typeof registry.check>>;
    try {
      answer = await registry.check(cpf, 'deposit');
    } catch (err) {
      if (err instanceof EligibilityUnavailableError) return { status: 'unavailable', error: err.message };
      throw err;
    }
    await recordEligibility(pool, {
      cpfHash: hash,
      cpfMasked: maskCpf(cpf),
      ...(deps.sealCpf ? { cpfSealed: deps.sealCpf(cpf) } : {}),
      status: answer.status,
      reason: answer.status === 'impeded' ? answer.reason : null,
      until: answer.status === 'impeded' ? (answer.until ?? null) : null,
      source: 'registry:deposit',
      at: clock(),
    });
    const recorded = (await eligibilityOfHash(pool, hash))?.impeded;
    if (!recorded) return { status: 'eligible' };
    return { status: 'impeded', reason: recorded.reason, since: recorded.since, until: recorded.until };
  }

  return {
    /**
     * The rules on a new deposit, under the policy in force, in order: the person verified
     * (`deposits.requireVerified`), not closed by an operator nor named by the registry, then its
     * amount reserved within the person's own deposit limits (customers/deposit-limits.ts). The
     * registry unreachable lets the deposit through unscreened unless `eligibility.failClosed`:
     * then a retryable DEPOSIT_ELIGIBILITY_UNAVAILABLE failure. Idempotent: a re-run finds its own
     * reservation.
     */
    async screenDeposit(input: DepositInput): Promise<DepositScreening> {
      const { version, policy } = await deps.policy.current();
      const refused = (refusal: DepositRefusal): DepositScreening => ({
        verdict: 'refused',
        policyVersion: version,
        refusal,
      });
      const cpf = input.client.cpf;
      const hash = hashCpf(cpf);
      const standing = await depositStandingOfHash(pool, hash);
      if (policy.deposits.requireVerified) {
        const verification = (standing.verification ?? 'none') as CustomerVerification;
        if (verification !== 'approved') return refused({ reason: NOT_VERIFIED, verification });
      }
      const screening: Screening = await screen(cpf, hash, standing.eligibility, policy.eligibility.freshMs);
      // Only an impeded person is ever closed: a passing screening needs no second read.
      if (screening.status !== 'eligible' && (await isClosed(pool, hash))) return refused({ reason: CLOSED });
      if (screening.status === 'impeded') {
        const { reason, since, until } = screening;
        return refused({ reason: IMPEDED, impeded: { reason, since, until } });
      }
      if (screening.status === 'unavailable' && policy.eligibility.failClosed) {
        throw ApplicationFailure.create({
          type: DEPOSIT_ELIGIBILITY_UNAVAILABLE,
          message: `the registry of impeded people did not answer: ${screening.error}`,
          details: [{ policyVersion: version }],
        });
      }
      if (standing.hasDepositLimits) {
        const verdict = await reserveWithinDepositLimits(pool, {
          cpfHash: hash,
          cpfMasked: maskCpf(cpf),
          workflowId: depositWorkflowId(input.txid),
          amountCentavos: input.amountCentavos,
          now: clock(),
        });
        if (!verdict.fits) {
          const { exceeded, remainingCentavos } = verdict;
          return refused({ reason: DEPOSIT_LIMIT_EXCEEDED, exceeded, remainingCentavos });
        }
      }
      return { verdict: 'pass', policyVersion: version };
    },
  };
}
