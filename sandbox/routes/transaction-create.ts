import { type Response, Router } from 'express';
import type { z } from 'zod';
import { valueToCentavos } from '../../connectors/identity-payments/money';
import type { SandboxContext } from '../context';
import { faultGate, merchantOk, parseBody, requireApiKey, sendError } from '../http';

// POST /v2/deposit/create and POST /v2/withdraw/create refuse a request the same way: behind the fault
// gate and the API key, a body the contract rejects is a 400, another merchant a 403, and a `value`
// that is not a positive amount with at most 2 decimal places a 400. Only what they create differs.

export interface TransactionCreateRequest<B> {
  body: B;
  /** `body.value` as integer centavos, already checked positive. */
  amountCentavos: number;
}

export function transactionCreateRoute<B extends { merchant: string; value: number }>(
  ctx: SandboxContext,
  endpoint: 'deposit' | 'withdraw',
  path: string,
  schema: z.ZodType<B>,
  create: (request: TransactionCreateRequest<B>, res: Response) => void | Promise<void>,
): Router {
  const router = Router();
  router.post(path, faultGate(ctx, endpoint), requireApiKey(ctx), async (req, res) => {
    const body = parseBody(schema, req.body, res);
    if (!body) return;
    if (!merchantOk(ctx, res, body.merchant)) return;
    const amountCentavos = valueToCentavos(body.value);
    if (amountCentavos === null || amountCentavos <= 0) {
      sendError(res, 400, 'Bad Request', ['value: must be a positive amount with at most 2 decimal places']);
      return;
    }
    await create({ body, amountCentavos }, res);
  });
  return router;
}
