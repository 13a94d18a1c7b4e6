// People who may move money: onboarded through the API until approved, then paid out to their
// own CPF key within the step-up bound and the daily limit. Shared with the bench, so it lives in
// scripts/people.ts; tests import it from here. For an ApiEnv, `peopleAt` in ../api/support.ts
// gives the address and sends the sandbox's liveness callbacks to the API's ingress.
export * from '../../scripts/people';
