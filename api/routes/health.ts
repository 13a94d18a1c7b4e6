import { Router } from 'express';
import type { ApiDeps } from '../deps';

// /healthz: the process is up. /readyz: Temporal and Postgres answer, so traffic can come.
export function healthRoutes({ temporal, pool }: Pick<ApiDeps, 'temporal' | 'pool'>) {
  const r = Router();
  r.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  r.get('/readyz', async (_req, res) => {
    const check = async (fn: () => Promise<unknown>) => {
      try {
        await Promise.race([
          fn(),
          new Promise((_, rej) => setTimeout(() => rej(new Error('timeout')), 2000)),
        ]);
        return 'ok';
      } catch (err) {
        return `down: ${err instanceof Error ? err.message : String(err)}`;
      }
    };
    const [temporalStatus, postgresStatus] = await Promise.all([
      check(() => temporal.workflowService.getSystemInfo({})),
      check(() => pool.query('SELECT 1')),
    ]);
    const ready = temporalStatus === 'ok' && postgresStatus === 'ok';
    res
      .status(ready ? 200 : 503)
      .json({ status: ready ? 'ready' : 'not ready', temporal: temporalStatus, postgres: postgresStatus });
  });
  return r;
}
