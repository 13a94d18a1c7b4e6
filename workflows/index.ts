// Every workflow the worker registers on task queue `pixflow`.
export { biometricsWorkflow } from './biometrics';
export { depositWorkflow } from './deposit';
export { depositReturnWorkflow } from './deposit-return';
export { depositReversalSweepWorkflow, depositReversalsWorkflow } from './deposit-reversals';
export { heldDepositWorkflow } from './held-deposit';
export { onboardingWorkflow } from './onboarding';
export { reconcilerWorkflow } from './reconciler';
export { rescreeningWorkflow } from './rescreening';
export { withdrawalWorkflow } from './withdrawal';
