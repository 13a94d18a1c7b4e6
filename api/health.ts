import { Router } from 'express';
import { ping } from '../db/pool';
import { withTemporalDeadline } from '../http/temporal-deadline';
import { withTimeout } from '../http/timeout';
import type { ApiDeps } from './deps';

/** A probe's own bound: a readiness check answers well within a probe's timeout. */
const CHECK_MS = 2_000;

// /healthz: the process is up. /readyz: Temporal and Postgres answer, so traffic can come.
export function healthRoutes({ temporal, pool }: Pick<ApiDeps, 'temporal' | 'pool'>) {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
    const check = async (fn: () => Promise<unknown>) => {
      try {
        await fn();
        return 'ok';
      } catch (err) {
        return `down: ${err instanceof Error ? err.message : String(err)}`;
      }
    };
    const [temporalStatus, postgresStatus] = await Promise.all([
      // The call itself ends at the deadline too: probes of a frozen server pile up no calls.
      check(() => withTemporalDeadline(temporal, CHECK_MS, () => temporal.workflowService.getSystemInfo({}))),
      check(() => withTimeout(ping(pool), CHECK_MS, 'postgres')),
    ]);
    const ready = temporalStatus === 'ok' && postgresStatus === 'ok';
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'not ready', temporal: temporalStatus, postgres: postgresStatus });
  });
  return r;
}
