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
import { DEFAULT_BRAND } from '../contracts/flow';
import { CLOSED, DEPOSIT_LIMIT_EXCEEDED, IMPEDED } from '../contracts/rules';
import { reserveWithinDepositLimits } from '../customers/deposit-limits';
import { knowsCustomer, meetCustomer } from '../db/customer-brands';
import { depositStandingOfHash, isClosed } from '../db/eligibility';
import { decidedUnder } from '../policy/brand';
import type { ActivityDeps } from './deps';
import { type Screener, type Screening, screenPerson } from './screen-person';

// What a new deposit must pass before anything is created at the provider (docs/rules.md): the
// person verified, not named by the registry of impeded people nor closed, and within the limits
// they set. Run by the deposit's flow in its first workflow task, so every refusal is a flow of
// its own: recorded with its reason and the version of the rules it was decided under.

/** The rules' verdict on a new deposit, and the version of the policy it was taken under. */
export type DepositScreening =
  | { verdict: 'pass'; policyVersion: number; brandPolicyVersion?: number }
  | { verdict: 'refused'; policyVersion: number; brandPolicyVersion?: number; refusal: DepositRefusal };

export function createDepositScreeningActivities(
  deps: Pick<ActivityDeps, 'pool' | 'hashCpf' | 'clock' | 'policy' | 'eligibility' | 'sealCpf'>,
) {
  const { pool, hashCpf, clock } = deps;

  // No registry configured: no one is screened (production refuses to start so unless the
  // operator screens elsewhere, common/config.ts).
  const screener: Screener | undefined = deps.eligibility && {
    registry: deps.eligibility,
    pool,
    hashCpf,
    policy: deps.policy,
    ...(deps.sealCpf ? { sealCpf: deps.sealCpf } : {}),
  };

  return {
    /**
     * The rules on a new deposit, under the policy in force, in order: the person verified
     * (`deposits.requireVerified`) and known to the deposit's brand (docs/brands.md, "People a
     * brand knows"), not closed by an operator nor named by the registry, then its
     * amount reserved within the person's own deposit limits (customers/deposit-limits.ts). The
     * registry unreachable lets the deposit through unscreened unless `eligibility.failClosed`:
     * then a retryable DEPOSIT_ELIGIBILITY_UNAVAILABLE failure. Idempotent: a re-run finds its own
     * reservation.
     */
    async screenDeposit(input: DepositInput): Promise<DepositScreening> {
      // The brand's policy: the person's rules read here are the operator's at every brand, and
      // the versions it names say what the brand's flow was decided under.
      const inForce = await deps.policy.current(input.brand);
      const { policy } = inForce;
      const versions = decidedUnder(inForce);
      const refused = (refusal: DepositRefusal): DepositScreening => ({
        verdict: 'refused',
        ...versions,
        refusal,
      });
      const cpf = input.client.cpf;
      const hash = hashCpf(cpf);
      const [standing, known] = await Promise.all([
        depositStandingOfHash(pool, hash),
        knowsCustomer(pool, hash, input.brand ?? DEFAULT_BRAND),
      ]);
      if (policy.deposits.requireVerified) {
        // A person the brand never onboarded is, to the brand, a person without verification:
        // whether another brand verified them is never told.
        const verification = (known ? (standing.verification ?? 'none') : 'none') as CustomerVerification;
        if (verification !== 'approved') return refused({ reason: NOT_VERIFIED, verification });
      }
      const screening: Screening = screener
        ? await screenPerson(screener, cpf, 'deposit', clock(), { last: standing.eligibility })
        : { status: 'eligible' };
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
          details: [versions],
        });
      }
      if (standing.hasDepositLimits) {
        const verdict = await reserveWithinDepositLimits(pool, {
          cpfHash: hash,
          cpfMasked: maskCpf(cpf),
          workflowId: depositWorkflowId(input.txid, input.brand),
          amountCentavos: input.amountCentavos,
          now: clock(),
        });
        if (!verdict.fits) {
          const { exceeded, remainingCentavos } = verdict;
          return refused({ reason: DEPOSIT_LIMIT_EXCEEDED, exceeded, remainingCentavos });
        }
      }
      // A deposit the rules let through (one taken without verification, where the policy allows
      // it) makes the person the brand's customer: its key may read them and set their limits.
      if (!known) await meetCustomer(pool, hash, input.brand ?? DEFAULT_BRAND);
      return { verdict: 'pass', ...versions };
    },
  };
}
