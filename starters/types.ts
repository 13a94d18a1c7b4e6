import type { Client } from '@temporalio/client';
import type { Config } from '../common/config';
import type { FlowTimings } from '../contracts/flow';

// Starting a flow, whoever asks (the backend API's routes, pixflow's Nexus service): each starter
// answers one of the typed outcomes below, never an HTTP status or a Nexus error. Each surface says
// them its own way: api/ as problem+json, nexus/ as operation errors.

/** What a starter needs: the configuration, a Temporal client, and the flows' configured waits. */
export interface StarterDeps {
  config: Config;
  temporal: Client;
  /** Overrides of the flows' waits (configuration, tests); never taken from a request. */
  timings?: Partial<FlowTimings>;
  /**
   * The merchant a brand's connector account names at its provider (its identity-payments
   * account's `merchant`), undefined when it has none; what a brand's flow records
   * (starters/requests.ts merchantOfFlow). Unset: the brand's id is recorded in its place.
   */
  brandMerchant?: (brand: string) => Promise<string | undefined>;
}

/**
 * The rules refused what was asked, inside the flow that decided it (docs/rules.md, "How a
 * refusal is answered"): the flow ended `refused`, with this reason code and the version of the
 * rules it was decided under.
 */
export interface Refused<Details> {
  outcome: 'refused';
  workflowId: string;
  /** The reason code the flow ended `refused` with. */
  reason: string;
  /** Unset only for a flow from before its state kept it. */
  policyVersion?: number;
  /** The brand's overrides' version laid on it, when the flow's brand sets rules of its own. */
  brandPolicyVersion?: number;
  /** What the caller acts on: what is left of a limit, the impediment, the flow's state... */
  details: Details;
}

/** What starting a flow answers. */
export type StartResult<Answer, Details> =
  /** This request started the flow; `answer` is the flow's first answer (a QR, a state). */
  | { outcome: 'started'; workflowId: string; answer: Answer }
  /** The same request again: the flow's answer, from the running flow or the closed one. */
  | { outcome: 'attached'; workflowId: string; answer: Answer; closed: boolean }
  | Refused<Details>
  /** Another request for the same id: nothing changed. */
  | { outcome: 'conflict'; workflowId: string; reason: string };

/**
 * The flows' waits that configuration sets, with the caller's overrides on top; what neither
 * sets, the flow takes from its defaults. Undefined when nothing is set.
 */
export function configuredTimings(
  config: Config,
  timings: Partial<FlowTimings> | undefined,
): Partial<FlowTimings> | undefined {
  const configured: Partial<FlowTimings> = {
    ...(config.LIVENESS_LINK_TTL_MS ? { livenessLinkTtlMs: config.LIVENESS_LINK_TTL_MS } : {}),
    ...(config.ONBOARDING_DEADLINE_MS ? { onboardingDeadlineMs: config.ONBOARDING_DEADLINE_MS } : {}),
    ...timings,
  };
  return Object.keys(configured).length > 0 ? configured : undefined;
}
