import { type NativeConnection, Worker } from '@temporalio/worker';
import { inject } from 'vitest';
import { createActivities } from '../../activities';
import { accountKeyHash, cpfHash } from '../../common/pii';
import type { Pool } from '../../db/pool';
import type { ProviderClient } from '../../provider/client';
import { testDataConverter } from './temporal';

/**
 * pixflow's real worker for a test: the run's workflow bundle, the real activities (provider
 * client against a sandbox, the run's Postgres), encrypted payloads as in production.
 */
export function createTestWorker(opts: {
  connection: NativeConnection;
  taskQueue: string;
  provider: ProviderClient;
  pool: Pool;
  piiKey: string;
}) {
  return Worker.create({
    connection: opts.connection,
    taskQueue: opts.taskQueue,
    workflowBundle: { code: inject('workflowBundle') },
    dataConverter: testDataConverter,
    activities: createActivities({
      provider: opts.provider,
      pool: opts.pool,
      clock: () => new Date(),
      hashCpf: (cpf) => cpfHash(cpf, opts.piiKey),
      hashAccount: (k) => accountKeyHash(k, opts.piiKey),
    }),
  });
}
