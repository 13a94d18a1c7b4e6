import { Router } from 'express';
import { z } from 'zod';
import { depositWorkflowId } from '../contracts/deposit';
import { withdrawalWorkflowId } from '../contracts/withdrawal';
import { findFlows } from '../db/backoffice-queues';
import type { BackofficeDeps } from './deps';
import { optional, parseForm, say } from './forms';
import { brandChoicesOf, brandFilterSchema, brandsFor } from './operators';
import { page, wordsOf } from './render';

// Finding a case by the id someone reads out on the phone or pastes from a ticket: a deposit's
// txid, a withdrawal's transactionId, the end-to-end id (E2E) of the Pix payment, or the workflow
// id itself. One match opens its case page; several are listed.

const searchQuerySchema = z.object({
  q: optional(
    z
      .string({ error: say('text') })
      .trim()
      .max(200, say('atMost', 200))
      // Ids are printable ASCII: anything else matches nothing, so it is refused as mistyped.
      .regex(/^[\x21-\x7e]*$/, say('id')),
  ),
  brand: brandFilterSchema,
});

export function searchRoutes({ pool }: BackofficeDeps) {
  const r = Router();
  r.get('/search', async (req, res) => {
    const t = wordsOf(req, res);
    const { q, brand } = parseForm(searchQuerySchema, req.query, '/backoffice/search', t, {
      kind: 'filter',
      fieldName: (name) => (name === 'brand' ? t.grants.brand : undefined),
    });
    const brands = await brandChoicesOf(pool, res);
    if (!q) return page(req, res, 'search', { q: '', flows: [], brands, brand: brand ?? '' });
    // A txid or transactionId names a flow at each brand: the operator's brands' are looked up.
    const within = brand ? [brand] : brands;
    const flows = await findFlows(pool, {
      workflowIds: [q, ...within.flatMap((b) => [depositWorkflowId(q, b), withdrawalWorkflowId(q, b)])],
      e2eId: q,
      brands: brandsFor(res, brand),
    });
    const [only] = flows;
    if (flows.length === 1 && only)
      return res.redirect(303, `/backoffice/flows/${encodeURIComponent(only.workflowId)}`);
    page(req, res, 'search', { q, flows, brands, brand: brand ?? '' }, flows.length ? 200 : 404);
  });
  return r;
}
