import type { Response, Router } from 'express';
import { qrDataUrl } from '../../common/qr-image';
import { centavosToValue } from '../../connectors/identity-payments/money';
import {
  type DepositCreateRequest,
  type DepositCreateResult,
  depositCreateRequestSchema,
  type InquiryRecord,
} from '../../connectors/identity-payments/wire/schemas';
import { buildBrCode } from '../brcode';
import type { SandboxContext } from '../context';
import { sendError } from '../http';
import type { DepositRecord } from '../state';
import { e2eId } from './ids';
import { type TransactionCreateRequest, transactionCreateRoute } from './transaction-create';

// POST /v2/deposit/create. Sandbox choices: HTTP 201 on creation; the same txid with an identical body
// answers 200 with the same result (idempotent); with a different body 409 DUPLICATE_TRANSACTION.
// Inquiry status: processing -> completed when paid, or expired when unpaid past `expiry`.

export function depositStatus(ctx: SandboxContext, d: DepositRecord): 'processing' | 'completed' | 'expired' {
  if (d.paid) return 'completed';
  return ctx.options.now() >= d.expiresAtMs ? 'expired' : 'processing';
}

export function depositInquiry(ctx: SandboxContext, d: DepositRecord): InquiryRecord {
  return {
    txid: d.txid,
    e2eId: d.e2eId,
    type_transaction: 'deposit',
    external_id_client: d.client.externalId,
    name_client: d.client.name,
    cpf_client: d.client.cpf,
    email_client: d.client.email,
    name_payer: d.payerName,
    cpf_payer: d.payerCpf,
    value: centavosToValue(d.amountCentavos),
    status: depositStatus(ctx, d),
    createdAt: d.createdAt,
    payedAt: d.paidAt,
  };
}

export type PayResult = { ok: true; deposit: DepositRecord } | { ok: false; status: number; message: string };

export interface PayOptions {
  payerName?: string | undefined;
  payerCpf?: string | undefined;
  /** The payment happens, but its `updated` notification is lost on the way. */
  dropNotification?: boolean | undefined;
}

export function payDeposit(ctx: SandboxContext, txid: string, payer: PayOptions = {}): PayResult {
  const d = ctx.state.deposits.get(txid);
  if (!d) return { ok: false, status: 404, message: 'deposit not found' };
  const status = depositStatus(ctx, d);
  if (status !== 'processing') return { ok: false, status: 409, message: `deposit is ${status}` };
  const now = ctx.options.now();
  d.paid = true;
  d.paidAt = new Date(now).toISOString();
  d.e2eId = e2eId(now);
  d.payerCpf = payer.payerCpf ?? d.client.cpf;
  // A payer named only by another CPF is someone else's account: their bank's name for them is
  // not the client's.
  const otherPayer = d.payerCpf !== '' && d.payerCpf !== d.client.cpf;
  d.payerName = payer.payerName ?? (otherPayer ? '' : d.client.name);
  ctx.notifier.send(
    'deposit',
    { id: d.txid, type: 'deposit', action: 'updated' },
    { drop: payer.dropNotification === true },
  );
  return { ok: true, deposit: d };
}

/** A txid seen before: the same request gets its first answer again (200), another one a 409. */
function answeredAsRepeat(ctx: SandboxContext, res: Response, txid: string, fingerprint: string): boolean {
  const existing = ctx.state.deposits.get(txid);
  if (!existing) return false;
  if (existing.fingerprint === fingerprint) res.status(200).json(existing.result);
  else sendError(res, 409, 'DUPLICATE_TRANSACTION', 'txid already used with a different request');
  return true;
}

/** The unpaid deposit a new request creates, with the QR code it answers (not stored yet). */
async function newDeposit(
  ctx: SandboxContext,
  { body, amountCentavos }: TransactionCreateRequest<DepositCreateRequest>,
  fingerprint: string,
): Promise<DepositRecord> {
  const now = ctx.options.now();
  const expiresAtMs = now + ctx.options.depositExpiryMs;
  const payload = buildBrCode({ txid: body.txid, amountCentavos, merchantName: 'Sandbox Merchant' });
  const result: DepositCreateResult = {
    e2eId: '',
    pixImage: await qrDataUrl(payload),
    pixPayload: payload,
    status: 'processing',
    value: centavosToValue(amountCentavos),
    bank: 'sandbox-bank',
    client: body.client.externalId,
    expiry: new Date(expiresAtMs).toISOString(),
    merchant: body.merchant,
    txid: body.txid,
    responseStatus: 201,
  };
  return {
    txid: body.txid,
    fingerprint,
    merchant: body.merchant,
    client: body.client,
    amountCentavos,
    createdAt: new Date(now).toISOString(),
    expiresAtMs,
    paid: false,
    paidAt: '',
    e2eId: '',
    payerName: '',
    payerCpf: '',
    result,
  };
}

export function depositRoutes(ctx: SandboxContext): Router {
  return transactionCreateRoute(
    ctx,
    'deposit',
    '/v2/deposit/create',
    depositCreateRequestSchema,
    async (request, res) => {
      const { body, amountCentavos } = request;
      const fingerprint = JSON.stringify({ merchant: body.merchant, client: body.client, amountCentavos });
      if (answeredAsRepeat(ctx, res, body.txid, fingerprint)) return;
      const deposit = await newDeposit(ctx, request, fingerprint);
      // Re-check after the await: a concurrent identical request may have won.
      if (answeredAsRepeat(ctx, res, body.txid, fingerprint)) return;
      ctx.state.deposits.set(body.txid, deposit);
      ctx.notifier.send('deposit', { id: body.txid, type: 'deposit', action: 'requested' });
      const autoMs = ctx.state.auto.payDepositsAfterMs;
      if (autoMs !== null) ctx.timers.set(() => payDeposit(ctx, body.txid), autoMs);
      res.status(201).json(deposit.result);
    },
  );
}
