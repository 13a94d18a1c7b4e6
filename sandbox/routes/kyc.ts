import { Router } from 'express';
import { kycRequestSchema } from '../../connectors/identity-payments/wire/schemas';
import type { SandboxContext } from '../context';
import { sideOf } from '../dialect';
import { faultGate, parseBody, requireToken } from '../http';
import { kycRecordFor } from '../kyc-data';
import { kycDocumentOrError } from './documents';

// POST /kyc/:document — the registry record with exactly the requested plan's fields, its status
// word in lower case or, under the dialect's `kyc.status` `other`, upper case (as the liveness
// answer's kyc object always has it).

export function kycRoutes(ctx: SandboxContext): Router {
  const router = Router();
  router.post('/kyc/:document', faultGate(ctx, 'kyc'), requireToken(ctx, 'bare'), (req, res) => {
    const body = parseBody(kycRequestSchema, req.body, res);
    if (!body) return;
    const doc = kycDocumentOrError(ctx, res, String(req.params.document));
    if (!doc) return;
    const record = kycRecordFor(doc, body.plan, ctx.options.now());
    const { status } = record;
    const upper = sideOf(ctx, 'kyc.status') === 'other' && status !== null;
    res.json(upper ? { ...record, status: status.toUpperCase() } : record);
  });
  return router;
}
