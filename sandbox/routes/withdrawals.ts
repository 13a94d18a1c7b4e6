import type { Router } from 'express';
import { centavosToDecimal } from '../../common/money';
import { centavosToValue } from '../../connectors/identity-payments/money';
import {
  type InquiryRecord,
  type WithdrawCreateRequest,
  type WithdrawCreateResult,
  withdrawCreateRequestSchema,
} from '../../connectors/identity-payments/wire/schemas';
import { pixKeyProblem } from '../../contracts/pix-key';
import type { SandboxContext } from '../context';
import { sideOf } from '../dialect';
import { sendError } from '../http';
import type { WithdrawalRecord } from '../state';
import { e2eId } from './ids';
import { type TransactionCreateRequest, transactionCreateRoute } from './transaction-create';

// POST /v2/withdraw/create. The answer the document does not show follows the dialect's
// `withdraw.create`: 201 {transactionId, e2eId, status: 'processing', value, pixKey, pixType,
// createdAt, responseStatus: 201}, or 200 with `value` a decimal string and `e2eId` null. A repeated
// transactionId never pays twice: 409 DUPLICATE_TRANSACTION, or 400 under `withdraw.duplicate` `other`.
// States: processing -> completed | failed (inquiry carries `reason` when failed).

export function withdrawalInquiry(w: WithdrawalRecord): InquiryRecord {
  return {
    txid: w.transactionId,
    e2eId: w.e2eId,
    type_transaction: 'withdraw',
    external_id_client: w.client.externalId,
    name_client: w.client.name,
    cpf_client: w.client.cpf,
    email_client: w.client.email,
    name_payer: '',
    cpf_payer: '',
    value: centavosToValue(w.amountCentavos),
    status: w.status,
    createdAt: w.createdAt,
    payedAt: w.status === 'completed' ? w.finishedAt : '',
    ...(w.reason === undefined ? {} : { reason: w.reason }),
  };
}

export type FinishResult =
  | { ok: true; withdrawal: WithdrawalRecord }
  | { ok: false; status: number; message: string };

export function finishWithdrawal(
  ctx: SandboxContext,
  transactionId: string,
  outcome: { status: 'completed' } | { status: 'failed'; reason: string },
): FinishResult {
  const w = ctx.state.withdrawals.get(transactionId);
  if (!w) return { ok: false, status: 404, message: 'withdrawal not found' };
  if (w.status !== 'processing') return { ok: false, status: 409, message: `withdrawal is ${w.status}` };
  w.status = outcome.status;
  w.finishedAt = new Date(ctx.options.now()).toISOString();
  if (outcome.status === 'failed') w.reason = outcome.reason;
  ctx.notifier.send('withdraw', { id: w.transactionId, type: 'withdraw', action: 'updated' });
  return { ok: true, withdrawal: w };
}

function newWithdrawal(
  { body, amountCentavos }: TransactionCreateRequest<WithdrawCreateRequest>,
  now: number,
): WithdrawalRecord {
  return {
    transactionId: body.transactionId,
    merchant: body.merchant,
    client: body.client,
    pixKey: body.pixKey,
    pixType: body.pixType,
    amountCentavos,
    createdAt: new Date(now).toISOString(),
    status: 'processing',
    reason: undefined,
    e2eId: e2eId(now),
    finishedAt: '',
    receiptCalls: 0,
  };
}

/** The creation answer (the contract does not show one; see the note at the top). */
function createdBody(w: WithdrawalRecord): WithdrawCreateResult {
  return {
    transactionId: w.transactionId,
    e2eId: w.e2eId,
    status: w.status,
    value: centavosToValue(w.amountCentavos),
    pixKey: w.pixKey,
    ...(w.pixType === undefined ? {} : { pixType: w.pixType }),
    createdAt: w.createdAt,
    responseStatus: 201,
  };
}

export function withdrawalRoutes(ctx: SandboxContext): Router {
  return transactionCreateRoute(
    ctx,
    'withdraw',
    '/v2/withdraw/create',
    withdrawCreateRequestSchema,
    (request, res) => {
      const { body } = request;
      const problem = pixKeyProblem(body.pixKey, body.pixType);
      if (problem) {
        sendError(res, 400, 'Bad Request', [`pixKey: ${problem}`]);
        return;
      }
      const { state, options } = ctx;
      if (state.withdrawals.has(body.transactionId)) {
        state.counters.duplicateWithdrawalsRejected += 1;
        const status = sideOf(ctx, 'withdraw.duplicate') === 'doc' ? 409 : 400;
        sendError(res, status, 'DUPLICATE_TRANSACTION', 'transactionId already used');
        return;
      }
      const record = newWithdrawal(request, options.now());
      state.withdrawals.set(body.transactionId, record);
      state.counters.payouts[body.transactionId] = (state.counters.payouts[body.transactionId] ?? 0) + 1;
      const autoMs = state.auto.settleWithdrawalsAfterMs;
      if (autoMs !== null) {
        ctx.timers.set(() => finishWithdrawal(ctx, body.transactionId, { status: 'completed' }), autoMs);
      }
      if (sideOf(ctx, 'withdraw.create') === 'doc') res.status(201).json(createdBody(record));
      else {
        const value = centavosToDecimal(record.amountCentavos);
        res.status(200).json({ ...createdBody(record), value, e2eId: null, responseStatus: 200 });
      }
    },
  );
}
