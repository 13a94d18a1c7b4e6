import { createBiometricsActivities } from './biometrics';
import { createDecisionProofActivities } from './decision-proofs';
import { createDepositActivities } from './deposit';
import { createDepositReturnActivities } from './deposit-return';
import { createDepositReversalActivities } from './deposit-reversals';
import { createDepositScreeningActivities } from './deposit-screening';
import type { ActivityDeps } from './deps';
import { createEligibilityActivities } from './eligibility';
import { createFlowActivities } from './flows';
import { createOnboardingActivities } from './onboarding';
import { createPayoutControlActivities } from './payout-controls';
import { createReconciliationActivities } from './reconciliation';
import { createRescreeningActivities } from './rescreening';
import { createWithdrawalActivities } from './withdrawal';
import { createWithdrawalRuleActivities } from './withdrawal-rules';

export type { ActivityDeps } from './deps';

/** Every activity the worker registers, built from its dependencies. */
export function createActivities(deps: ActivityDeps) {
  const flows = createFlowActivities(deps);
  return {
    ...flows,
    ...createOnboardingActivities(deps),
    ...createEligibilityActivities(deps),
    ...createBiometricsActivities(deps),
    ...createDepositScreeningActivities(deps),
    ...createDepositActivities({ ...deps, recordFlow: flows.recordFlow }),
    ...createDepositReturnActivities(deps),
    ...createDepositReversalActivities(deps),
    ...createWithdrawalActivities({ ...deps, recordFlow: flows.recordFlow }),
    ...createWithdrawalRuleActivities(deps),
    ...createPayoutControlActivities(deps),
    ...createReconciliationActivities(deps),
    ...createRescreeningActivities(deps),
    ...createDecisionProofActivities(deps),
  };
}
