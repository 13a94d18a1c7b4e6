import type { Client } from '@temporalio/client';
import type { MoneyRules } from '../contracts/rules';
import type { Pool } from '../db/pool';
import type { EligibilityRegistry } from '../eligibility/registry';
import type { ProviderClient } from '../provider/client';

/** What every activity factory receives; tests pass their own. */
export interface ActivityDeps {
  provider: ProviderClient;
  pool: Pool;
  clock: () => Date;
  /** Keyed CPF hash (common/pii.ts with the configured key). */
  hashCpf: (cpf: string) => string;
  /** Keyed hash of a registered account's normalised key (common/pii.ts accountKeyHash). */
  hashAccount: (normalisedKey: string) => string;
  /** The money rules as configured (docs/rules.md). */
  rules: MoneyRules;
  /** Where a withdrawal's step-up starts the person's biometric identification. */
  temporal: { client: Client; taskQueue: string };
  /** The sweep that looks up flows waiting for the provider. */
  reconciliation: ReconciliationSettings;
  /** The registry of impeded people an onboarding asks (ELIGIBILITY_URL); none: not screened. */
  eligibility?: EligibilityRegistry;
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
