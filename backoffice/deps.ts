import type { Client } from '@temporalio/client';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import type { Pool } from '../db/pool';

/** What the back office's pages are built from (the API process hands its own). */
export interface BackofficeDeps {
  config: Config;
  temporal: Client;
  pool: Pool;
  log: Logger;
}
