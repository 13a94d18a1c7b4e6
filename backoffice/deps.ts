import type { Client } from '@temporalio/client';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import type { Pool } from '../db/pool';
import type { PolicyReader } from '../policy/schema';

/** What the back office's pages are built from (the API process hands its own). */
export interface BackofficeDeps {
  config: Config;
  temporal: Client;
  pool: Pool;
  log: Logger;
  /** The rules policy in force (docs/policy.md): the limits and deadlines pages show. */
  policy: PolicyReader;
}
