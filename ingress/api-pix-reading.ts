import { z } from 'zod';
import { depositWorkflowId } from '../contracts/deposit';
import {
  depositReversalsWorkflowId,
  type ReversalCheck,
  reversalCheckSignal,
} from '../contracts/deposit-reversal';
import { brandScopedId, providerNotificationSignal } from '../contracts/flow';
import { txidSchema } from '../contracts/flow-input';
import { Problem, validationProblem } from '../http/problem';
import { API_PIX_POINT, type ApiPixHint } from './api-pix-reversals';
import { dedupeKey } from './notification';

// The PSP's callback body, `{ "pix": [...] }` (API Pix, POST {webhookUrl}/pix), read into what
// the inbox stores: for each received Pix that paid a charge of pixflow's, a hint to its deposit,
// and, when it lists returns, a check of the deposit's reversals. Nothing in the body is money to
// pixflow: the deposit and its reversal check ask the PSP (the connector's inquiries).

/** What the ingress needs of one Pix, as the API Pix connector reads it (its PixNotification). */
export interface PixHintSource {
  e2eId: string;
  /** pixflow's txid, mapped back by the connector; absent for a Pix that paid no charge. */
  txid?: string;
  returns: ReadonlyArray<{ returnId: string; state: string }>;
}

/** The connector's reader of the callback body (connectors/api-pix readPixNotifications). */
export type ReadPixNotifications = (body: unknown) => readonly PixHintSource[];

// The spec's envelope, checked here so a refusal names the field whatever the reader says.
const callbackEnvelope = z.object({
  pix: z
    .array(
      z.looseObject({
        endToEndId: z.string().regex(/^[a-zA-Z0-9]{32}$/, 'must be an end-to-end id (32 letters and digits)'),
      }),
    )
    .min(1, 'must list at least one Pix'),
});

/** One inbox row of the callback. */
export interface ApiPixRow {
  point: typeof API_PIX_POINT;
  workflowId: string;
  logTarget: string;
  signalName: string;
  signalPayload: ApiPixHint | ReversalCheck;
  dedupeKey: string;
  /** Stored as delivered, not signalled: it names no charge of pixflow's. */
  keepOnly?: string;
}

/** The body's Pix, or a 400 problem naming the field: nothing of a refused body is stored. */
export function readApiPixBody(raw: string, read: ReadPixNotifications): readonly PixHintSource[] {
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new Problem(400, 'validation-error', 'Request validation failed', 'body: is not JSON');
  }
  const envelope = callbackEnvelope.safeParse(body);
  if (!envelope.success) throw validationProblem('body', envelope.error);
  try {
    return read(body);
  } catch (err) {
    if (err instanceof z.ZodError) throw validationProblem('body', err);
    const reason = err instanceof Error ? err.message : String(err);
    throw new Problem(400, 'validation-error', 'Request validation failed', `body: ${reason.slice(0, 300)}`);
  }
}

/**
 * The rows of one callback. The key holds what the Pix says of itself and its returns: a copy
 * joins the row of the same news, a return that moved on is news of its own.
 */
export function apiPixRowsOf(
  pix: readonly PixHintSource[],
  receivedAt: Date,
  /** The brand whose account the callback came through: its deposits are the ones told. */
  brand?: string,
): ApiPixRow[] {
  return pix.flatMap((p): ApiPixRow[] => {
    const returns = [...p.returns]
      .map((r) => `${r.returnId}:${r.state}`)
      .sort()
      .join(',');
    const txid = p.txid !== undefined && txidSchema.safeParse(p.txid).success ? p.txid : undefined;
    const workflowId =
      txid === undefined ? brandScopedId(`pix-${p.e2eId}`, brand) : depositWorkflowId(txid, brand);
    const hint: ApiPixRow = {
      point: API_PIX_POINT,
      workflowId,
      logTarget: workflowId,
      signalName: providerNotificationSignal.name,
      signalPayload: {
        type: 'deposit',
        action: 'updated',
        id: txid ?? '',
        receivedAt: receivedAt.toISOString(),
      },
      dedupeKey: dedupeKey([API_PIX_POINT, workflowId, p.e2eId, returns]),
      ...(txid === undefined ? { keepOnly: 'not signalled: the Pix paid no charge pixflow made' } : {}),
    };
    if (txid === undefined || p.returns.length === 0) return [hint];
    const checkId = depositReversalsWorkflowId(txid, brand);
    const check: ApiPixRow = {
      point: API_PIX_POINT,
      workflowId: checkId,
      logTarget: checkId,
      signalName: reversalCheckSignal.name,
      signalPayload: { txid, e2eId: p.e2eId, source: 'webhook' },
      dedupeKey: dedupeKey([API_PIX_POINT, checkId, p.e2eId, returns]),
    };
    return [hint, check];
  });
}
