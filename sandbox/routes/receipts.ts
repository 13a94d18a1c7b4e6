import { Router } from 'express';
import { centavosToDecimal } from '../../provider/money';
import { type ReceiptResult, receiptRequestSchema, receiptStatusCodes } from '../../provider/schemas';
import { receiptPngBase64 } from '../brcode';
import { isoNow, type SandboxContext } from '../context';
import { faultGate, merchantOk, parseBody, requireApiKey } from '../http';

// POST /receipts/merchant/cash-out/generate (JSON or form-encoded). Status code 0-4; the invoice is a
// base64 PNG (no data-URL prefix) only for a completed withdrawal, and stays empty for the first
// `receiptLagCalls` calls after completion (the real provider renders it with a lag).

export function receiptRoutes(ctx: SandboxContext): Router {
  const router = Router();
  router.post(
    '/receipts/merchant/cash-out/generate',
    faultGate(ctx, 'receipt'),
    requireApiKey(ctx),
    async (req, res) => {
      const body = parseBody(receiptRequestSchema, req.body, res);
      if (!body) return;
      if (!merchantOk(ctx, res, body.merchant)) return;
      const w = ctx.state.withdrawals.get(body.transactionId);
      const result: ReceiptResult = {
        transactionId: body.transactionId,
        status: receiptStatusCodes.notFound,
        invoice: '',
        datetimerequest: isoNow(ctx),
        datetimepayed: '',
      };
      if (w) {
        result.status = receiptStatusCodes[w.status === 'failed' ? 'failed' : w.status];
        if (w.status === 'completed') {
          result.datetimepayed = w.finishedAt;
          w.receiptCalls += 1;
          if (w.receiptCalls > ctx.state.faults.receiptLagCalls) {
            result.invoice = await receiptPngBase64(
              `PIX SANDBOX RECEIPT|${w.transactionId}|${w.e2eId}|BRL ${centavosToDecimal(w.amountCentavos)}|${w.finishedAt}`,
            );
          }
        }
      }
      res.json(result);
    },
  );
  return router;
}
