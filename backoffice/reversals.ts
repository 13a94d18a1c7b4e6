import { Router } from 'express';
import { listReversals } from '../db/deposit-reversals';
import type { BackofficeDeps } from './deps';
import { brandOfWorkflowId, brandsFor } from './operators';
import { page } from './render';

// "Devoluções MED": completed deposits whose money went back to the payer without pixflow asking
// (a MED return, or a return pixflow did not ask for), newest first. Operators look and open the
// deposit's case; nothing is decided here (the alert it raised is where a review is recorded).

const PAGE_SIZE = 100;

export function reversalRoutes({ pool }: Pick<BackofficeDeps, 'pool'>) {
  const r = Router();
  r.get('/reversals', async (req, res) => {
    const { items, total } = await listReversals(pool, { limit: PAGE_SIZE, brands: brandsFor(res) });
    page(req, res, 'reversals', {
      items: items.map((v) => ({ ...v, brandId: brandOfWorkflowId(v.workflowId) })),
      total,
    });
  });
  return r;
}
