import type { Pool } from '../db/pool';
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
}
