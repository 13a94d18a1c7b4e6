import type { Client } from '@temporalio/client';
import type { Logger } from '../common/logger';
import { maskCpfsIn } from '../common/mask';
import type { ApiMetrics } from '../common/metrics';
import { startPollingLoop } from '../common/polling-loop';
import { claimPending } from '../db/inbox';
import type { Pool } from '../db/pool';
import {
  type DeliveryContext,
  type DeliveryOptions,
  defaultDeliveryOptions,
  deliverRow,
  leaseMs,
  UNMATCHED_LOG,
} from './deliver';

// Delivers inbox rows the fast path could not: workflow not started yet, Temporal down, or the
// API process died between the INSERT and the signal. Rows are claimed with FOR UPDATE SKIP
// LOCKED plus a lease, so every API process can run a relay over the same table.

export interface RelayDeps {
  pool: Pool;
  temporal: Client;
  log: Logger;
  intervalMs: number;
  batchSize?: number;
  delivery?: Partial<DeliveryOptions>;
  /** The API's metrics: the relay counts the liveness callbacks it finds unmatched. */
  metrics?: Pick<ApiMetrics, 'countUnmatchedLiveness'>;
}

export interface InboxRelay {
  /** One pass over due rows; returns how many were claimed. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

export function startInboxRelay(deps: RelayDeps): InboxRelay {
  const { pool, temporal, log } = deps;
  const options: DeliveryOptions = { ...defaultDeliveryOptions, ...deps.delivery };
  const ctx: DeliveryContext = { pool, temporal, options, metrics: deps.metrics };
  const batchSize = deps.batchSize ?? 50;

  async function runOnce(): Promise<number> {
    const rows = await claimPending(pool, batchSize, leaseMs(options));
    const outcomes = await Promise.all(
      rows.map((row) =>
        deliverRow(ctx, row).catch((err) => {
          log.warn({ err: String(err), id: row.id }, 'inbox relay could not record a delivery');
          return 'error' as const;
        }),
      ),
    );
    rows.forEach((row, i) => {
      const outcome = outcomes[i];
      const target = row.point === 'liveness' ? maskCpfsIn(row.workflowId) : row.workflowId;
      if (outcome === 'delivered' || outcome === 'closed' || outcome === 'gave_up') {
        log.info({ id: row.id, point: row.point, target, outcome }, 'inbox relay delivered a notification');
      } else if (outcome === 'unmatched') {
        log.warn({ id: row.id, point: row.point, target, outcome }, UNMATCHED_LOG);
      }
    });
    return rows.length;
  }

  // Postgres down: the loop says so now and then, not every tick.
  const loop = startPollingLoop({
    pass: runOnce,
    batchSize,
    intervalMs: deps.intervalMs,
    log,
    failure: 'inbox relay pass failed; retrying',
  });

  return {
    runOnce,
    stop: () => loop.stop(),
  };
}
