import { Router } from 'express';
import { kycRequestSchema } from '../../provider/schemas';
import type { SandboxContext } from '../context';
import { faultGate, requireToken, sendError, zodMessages } from '../http';
import { kycRecordFor } from '../kyc-data';
import { kycDocumentOrError } from './documents';

// POST /kyc/:document — the registry record with exactly the requested plan's fields.

export function kycRoutes(ctx: SandboxContext): Router {
  const router = Router();
  router.post('/kyc/:document', faultGate(ctx, 'kyc'), requireToken(ctx), (req, res) => {
    const parsed = kycRequestSchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      sendError(res, 400, 'Bad Request', zodMessages(parsed.error));
      return;
    }
    const doc = kycDocumentOrError(ctx, res, String(req.params.document));
    if (!doc) return;
    res.json(kycRecordFor(doc, parsed.data.plan, ctx.options.now()));
  });
  return router;
}
