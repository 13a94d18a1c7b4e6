import type { Client } from '@temporalio/client';
import type { Connector, ConnectorRegistry } from '../connectors/types';
import type { Pool } from '../db/pool';
import type { EligibilityRegistry } from '../eligibility/registry';
import type { PolicyReader } from '../policy/schema';
import type { PayoutAuthorizationSettings } from './payout-authorization';

/** What every activity factory receives; tests pass their own. */
export interface ActivityDeps {
  /** The payment and identity provider, through its connector, in pixflow's words. */
  provider: Connector;
  /**
   * The connectors deposits are routed to, by name (the first provider among them); unset: the
   * first provider alone.
   */
  collectors?: ConnectorRegistry;
  /**
   * A brand's connectors, for the flows of that brand (activities/brand-connectors.ts): the
   * default brand's are `provider` and `collectors` while it has no record of its own. Unset:
   * every flow is the default brand's, on `provider` and `collectors`.
   */
  connectorsFor?: (brand: string) => Promise<FlowConnectors>;
  pool: Pool;
  clock: () => Date;
  /** Keyed CPF hash (common/pii.ts with the configured key). */
  hashCpf: (cpf: string) => string;
  /** Keyed hash of a registered account's normalised key (common/pii.ts accountKeyHash). */
  hashAccount: (normalisedKey: string) => string;
  /** The rules in force (docs/policy.md): read once per decision, whose version it records. */
  policy: PolicyReader;
  /** The operator's payout authorization (PAYOUT_AUTHORIZATION_URL); none: not asked. */
  payoutAuthorization?: PayoutAuthorizationSettings;
  /** Counts a payout's deadline passing (the worker's metrics); none: not counted. */
  countPayoutDeadline?: (state: 'at_risk' | 'missed') => void;
  /** Counts a provider answer no rule of its connector reads, by operation (the worker's metrics). */
  countUnclassified?: (op: string) => void;
  /** Counts a decision a flow refused for want of a proof (the worker's metrics), beside its row. */
  countRefusedDecision?: (kind: string, cause: string) => void;
  /** Where a withdrawal's step-up starts the person's biometric identification. */
  temporal: { client: Client; taskQueue: string };
  /** The sweep that looks up flows waiting for the provider. */
  reconciliation: ReconciliationSettings;
  /** The registry of impeded people an onboarding asks (ELIGIBILITY_URL); none: not screened. */
  eligibility?: EligibilityRegistry;
  /** Seals and opens the CPF kept for the rescreening (common/secret-box.ts with the codec keys). */
  sealCpf?: (cpf: string) => string;
  openCpf?: (sealed: string) => string;
  /** The periodic rescreening of active customers (docs/rules.md, Eligibility). */
  rescreening?: RescreeningSettings;
}

/** A brand's connectors: its first provider (undefined when it has no account there) and its collecting ones. */
export interface FlowConnectors {
  provider: Connector | undefined;
  collectors: ConnectorRegistry;
}

/** How a rescreening pass runs (docs/configuration.md); whom it screens is the policy's. */
export interface RescreeningSettings {
  /** People screened a second, at most. */
  perSecond: number;
  /**
   * Screens one person with purpose `rescreening` (activities/screen-person.ts, given
   * by the worker): a fresh answer reused, else the registry asked and the answer recorded.
   */
  screen: (cpf: string) => Promise<{ status: 'eligible' | 'impeded' | 'unavailable'; reason?: string }>;
}

/** How the sweep runs (docs/configuration.md). */
export interface ReconciliationSettings {
  /** Waits between a flow's checks, ms, from when it started waiting; the last one repeats. */
  scheduleMs: readonly number[];
  /** Provider inquiries a second, at most: one sweep runs at a time, on whichever worker. */
  maxPerSecond: number;
  /** How often the sweep runs. */
  intervalMs: number;
}
