import { createDepositActivities } from './deposit';
import type { ActivityDeps } from './deps';
import { createFlowActivities } from './flows';
import { createOnboardingActivities } from './onboarding';
import { createWithdrawalActivities } from './withdrawal';

export type { ActivityDeps } from './deps';

/** Every activity the worker registers, built from its dependencies. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...createFlowActivities(deps),
    ...createOnboardingActivities(deps),
    ...createDepositActivities(deps),
    ...createWithdrawalActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
