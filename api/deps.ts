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
