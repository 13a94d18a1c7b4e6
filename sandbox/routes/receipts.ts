import { Router } from 'express';
import { receiptRequestSchema, receiptStatusCodes } from '../../connectors/identity-payments/wire/schemas';
import { isoNow, type SandboxContext } from '../context';
import { sideOf } from '../dialect';
import { faultGate, merchantOk, parseBody, requireApiKey, sendError } from '../http';
import { type ReceiptParty, receiptPng } from '../receipt-image';
import type { WithdrawalRecord } from '../state';

// POST /receipts/merchant/cash-out/generate: JSON only, or a form only under the dialect's
// `receipt.content-type` `other` (the other one is a 415). Status code 0-4 (an integer with "" for an
// empty field, or under `receipt.status` `other` its text with null); the invoice is a
// base64 PNG (no data-URL prefix) only for a completed withdrawal, and stays empty for the first
// `receiptLagCalls` calls after completion (the real provider renders it with a lag). The image is
// a readable comprovante (sandbox/receipt-image.ts), rendered once per payout: a settled payout
// never changes, and rendering its text is slow.

/** Who pays every sandbox payout: the merchant, with a made-up CNPJ (valid check digits). */
const SANDBOX_PAYER: ReceiptParty = { name: 'Sandbox Merchant', document: '11222333000181' };

/** The receipt result as the `doc` side writes it. */
interface Receipt {
  transactionId: string;
  status: number;
  invoice: string;
  datetimerequest: string;
  datetimepayed: string;
}

/** The `other` side of `receipt.status`: the code as text, null for every empty field. */
function receiptAsText(result: Receipt) {
  const orNull = (v: string) => (v === '' ? null : v);
  return {
    ...result,
    status: orNull(String(result.status)),
    invoice: orNull(result.invoice),
    datetimepayed: orNull(result.datetimepayed),
  };
}

export function receiptRoutes(ctx: SandboxContext): Router {
  const router = Router();
  const rendered = new WeakMap<WithdrawalRecord, Promise<string>>();
  const imageOf = (w: WithdrawalRecord) => {
    let png = rendered.get(w);
    if (!png) {
      png = receiptPng({
        amountCentavos: w.amountCentavos,
        paidAt: w.finishedAt,
        payer: SANDBOX_PAYER,
        payee: { name: w.client.name, document: w.client.cpf },
        e2eId: w.e2eId,
        transactionId: w.transactionId,
      }).then((bytes) => bytes.toString('base64'));
      // A failed render is not kept: the next call tries again.
      png.catch(() => rendered.delete(w));
      rendered.set(w, png);
    }
    return png;
  };
  router.post(
    '/receipts/merchant/cash-out/generate',
    faultGate(ctx, 'receipt'),
    requireApiKey(ctx),
    async (req, res) => {
      const type =
        sideOf(ctx, 'receipt.content-type') === 'doc'
          ? 'application/json'
          : 'application/x-www-form-urlencoded';
      if (!req.is(type)) {
        sendError(res, 415, 'Unsupported Media Type', `Content-Type must be ${type}`);
        return;
      }
      const body = parseBody(receiptRequestSchema, req.body, res);
      if (!body) return;
      if (!merchantOk(ctx, res, body.merchant)) return;
      const w = ctx.state.withdrawals.get(body.transactionId);
      const result: Receipt = {
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
            result.invoice = await imageOf(w);
          }
        }
      }
      res.json(sideOf(ctx, 'receipt.status') === 'doc' ? result : receiptAsText(result));
    },
  );
  return router;
}
