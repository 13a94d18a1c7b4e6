import { Router } from 'express';
import { kycRequestSchema } from '../../connectors/identity-payments/wire/schemas';
import type { SandboxContext } from '../context';
import { faultGate, parseBody, requireToken } from '../http';
import { kycRecordFor } from '../kyc-data';
import { kycDocumentOrError } from './documents';

// POST /kyc/:document — the registry record with exactly the requested plan's fields.

export function kycRoutes(ctx: SandboxContext): Router {
  const router = Router();
  router.post('/kyc/:document', faultGate(ctx, 'kyc'), requireToken(ctx), (req, res) => {
    const body = parseBody(kycRequestSchema, req.body, res);
    if (!body) return;
    const doc = kycDocumentOrError(ctx, res, String(req.params.document));
    if (!doc) return;
    res.json(kycRecordFor(doc, body.plan, ctx.options.now()));
  });
  return router;
}
