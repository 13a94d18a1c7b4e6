import type { Client } from '@temporalio/client';
import type { PayloadCodec } from '@temporalio/common';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import type { ApiMetrics } from '../common/metrics';
import type { FlowTimings } from '../contracts/flow';
import type { Pool } from '../db/pool';
import type { PolicyReader } from '../policy/schema';

/** What the API's routes are built from; tests pass their own. */
export interface ApiDeps {
  config: Config;
  temporal: Client;
  pool: Pool;
  log: Logger;
  /** The rules in force (docs/policy.md), the same version the worker decides under. */
  policy: PolicyReader;
  /** Overrides of the flows' waits (tests); never taken from a request. */
  timings?: Partial<FlowTimings>;
  metrics?: ApiMetrics;
  /** The payload codec the Temporal UI reaches through /codec (the client's own). */
  codec?: PayloadCodec;
}

/**
 * What starting a flow needs, whoever asks for it: the API's routes and pixflow's Nexus service
 * (nexus/) start flows through the same functions, with the same rules.
 */
export type FlowStarter = Pick<ApiDeps, 'config' | 'temporal' | 'pool' | 'timings'>;

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
