import { ApplicationFailure } from '@temporalio/common';
import { maskCpf } from '../common/mask';
import { recordEligibility } from '../db/eligibility';
import type { ImpededReason } from '../eligibility/contract';
import { EligibilityUnavailableError } from '../eligibility/registry';
import type { ActivityDeps } from './deps';

/** What an onboarding learns of the registry of impeded people: only the decision, never the CPF. */
export type EligibilityDecision =
  | { status: 'eligible' }
  | { status: 'impeded'; reason: ImpededReason }
  /** No registry is configured (ELIGIBILITY_URL unset): the person is not screened. */
  | { status: 'unscreened' };

export function createEligibilityActivities(
  deps: Pick<ActivityDeps, 'pool' | 'hashCpf' | 'eligibility' | 'sealCpf'>,
) {
  return {
    /**
     * Asks the registry of impeded people about the person at sign-up and records the answer on
     * their customer row (a newly impeded person with a `customer.impeded` event). Idempotent: a
     * retry records the same answer again, and the event only on a change. The registry
     * unreachable is a retryable failure: the onboarding waits for it, up to its deadline.
     */
    async checkEligibility(input: { cpf: string }): Promise<EligibilityDecision> {
      const registry = deps.eligibility;
      if (!registry) return { status: 'unscreened' };
      let answer: Awaited<ReturnType<typeof registry.check>>;
      try {
        answer = await registry.check(input.cpf, 'onboarding');
      } catch (err) {
        if (err instanceof EligibilityUnavailableError)
          throw ApplicationFailure.retryable(err.message, 'EligibilityUnavailable');
        throw err;
      }
      await recordEligibility(deps.pool, {
        cpfHash: deps.hashCpf(input.cpf),
        cpfMasked: maskCpf(input.cpf),
        ...(deps.sealCpf ? { cpfSealed: deps.sealCpf(input.cpf) } : {}),
        status: answer.status,
        reason: answer.status === 'impeded' ? answer.reason : null,
        until: answer.status === 'impeded' ? (answer.until ?? null) : null,
        source: 'registry:onboarding',
        at: new Date(),
      });
      return answer.status === 'impeded'
        ? { status: 'impeded', reason: answer.reason }
        : { status: 'eligible' };
    },
  };
}
