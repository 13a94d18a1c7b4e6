import * as nexus from 'nexus-rpc';
import type { z } from 'zod';
import type { DepositQr } from '../contracts/deposit';
import type {
  depositRequestSchema,
  onboardingRequestSchema,
  withdrawalRequestSchema,
} from '../starters/requests';
import type { flowRefSchema } from './inputs';
import type { FlowOutcome, OnboardingOutcome, WithdrawalOutcome } from './outcomes';

// pixflow's Nexus service: what a backend that runs on Temporal imports to call pixflow from its
// own workflows, durably (docs/nexus.md). The worker serves it (nexus/handlers.ts) on pixflow's
// namespace and task queue, behind the Nexus endpoint `npm start` creates. Inputs are the API's
// bodies, checked with the same schemas; only types are imported here, so a caller's workflow
// bundle holds nexus-rpc and nothing else of pixflow (with nexus/caller.ts, which sets the API
// key header). Each operation needs a pixflow API key with its API route's scopes. Answers and
// refusals' details carry no personal data and cross in the clear: a caller reads them with no
// pixflow codec key.

/** The endpoint `npm start` creates for this service; elsewhere, the one its operator made. */
export const PIXFLOW_NEXUS_ENDPOINT = 'pixflow';

/**
 * The operation header that carries the caller's pixflow API key (the key alone, as
 * `Authorization: Bearer` carries it to the API). A caller's workflow sets it with
 * nexus/caller.ts; each operation needs the scopes of its API route (docs/nexus.md).
 */
export const PIXFLOW_API_KEY_HEADER = 'pixflow-api-key';

/**
 * The operation header a platform key names the brand it acts for in (the API's `Pixflow-Brand`);
 * a brand key acts for its own brand and need not send it (docs/brands.md).
 */
export const PIXFLOW_BRAND_HEADER = 'pixflow-brand';

/** An onboarding, as POST /v1/onboardings takes it. */
export type OnboardingRequest = z.input<typeof onboardingRequestSchema>;
/**
 * A deposit, as POST /v1/deposits takes it. Without `txid`, one is derived from the operation's
 * request id, so a retried operation is the same deposit.
 */
export type DepositRequest = z.input<typeof depositRequestSchema>;
/**
 * A withdrawal, as POST /v1/withdrawals takes it. Without `transactionId`, one is derived from
 * the operation's request id (`nexus-<request id>`), so a retried operation is the same payout.
 */
export type WithdrawalRequest = z.input<typeof withdrawalRequestSchema>;
/** Which flow to wait for: an onboarding by CPF, a deposit by txid, a withdrawal by transactionId. */
export type FlowRef = z.input<typeof flowRefSchema>;

/** A deposit's QR, at once: POST /v1/deposits' answer, and whether this operation created it. */
export interface DepositCreated {
  workflowId: string;
  txid: string;
  /** The Pix copy-and-paste, its image (a PNG data URL), expiry and amount. */
  qr: DepositQr & { image: string };
  created: boolean;
}

export type {
  DepositOutcome,
  FlowOutcome,
  OnboardingOutcome,
  WithdrawalOutcome,
} from './outcomes';

export const pixflowService = nexus.service('pixflow', {
  /**
   * Starts the person's onboarding (idempotent per CPF; an expired one starts over) and ends with
   * its outcome: `approved`, `rejected` or `expired`. One that ended already answers at once.
   */
  startOnboarding: nexus.operation<OnboardingRequest, OnboardingOutcome>(),
  /**
   * Creates a deposit and answers its QR code in one round trip, as POST /v1/deposits does. Its
   * outcome (paid and `completed`, `expired`, `held`...) comes from waitForOutcome.
   */
  createDeposit: nexus.operation<DepositRequest, DepositCreated>(),
  /**
   * Sends a Pix payout once the money rules allow it, and ends with the withdrawal's outcome
   * (`completed`, `failed`, `stuck`). A refusal by the rules fails the operation at once.
   */
  requestWithdrawal: nexus.operation<WithdrawalRequest, WithdrawalOutcome>(),
  /** Ends with a flow's outcome, whoever started it; one that ended already answers at once. */
  waitForOutcome: nexus.operation<FlowRef, FlowOutcome>(),
});
