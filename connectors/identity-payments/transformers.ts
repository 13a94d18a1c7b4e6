import { LIVENESS_STATUSES, type LivenessStatus } from '../../contracts/flow';
import type { DepositPayer, Payee } from '../../contracts/flow-input';
import { UnclassifiedAnswerError } from '../errors';
import { normaliseWord, standingOf } from '../status-words';
import type {
  DepositCharge,
  DepositLookup,
  KycFacts,
  LivenessCallback,
  LivenessSession,
  PaymentNotification,
  PayoutAccepted,
  PayoutLookup,
  PayoutReceipt,
} from '../types';
import type { Transaction } from './client';
import type {
  DepositClient,
  DepositCreateResult,
  KycAnswer,
  LivenessAnswer,
  ReceiptResult,
  WithdrawClient,
  WithdrawCreateResult,
} from './wire/schemas';
import { receiptStatusCodes } from './wire/schemas';

// pixflow's requests in this provider's words, and its answers in pixflow's. Liberal where the document is silent (any letter
// case, "" or null for an empty field, codes as numbers or text); an answer a money or identity
// decision hangs on that no rule reads is an UnclassifiedAnswerError naming the field, never a
// guess.

/** A payee (and a payer's identity) as the provider's `client` object. */
export function toWirePerson(p: Payee): WithdrawClient {
  return {
    externalId: p.externalId,
    cpf: p.cpf,
    email: p.email,
    name: p.name,
    ...(p.phone === undefined ? {} : { phone: p.phone }),
    ...(p.birthday === undefined ? {} : { birthday: p.birthday }),
  };
}

/** A deposit's payer, with the bank account the rules ask for under the provider's names. */
export function toWirePayer(p: DepositPayer): DepositClient {
  const account = p.bankAccount;
  return {
    ...toWirePerson(p),
    ...(account ? { bankispb: account.ispb, bankbranch: account.branch, bankaccount: account.number } : {}),
  };
}

const unclassified = (op: string, field: string, value: unknown) =>
  new UnclassifiedAnswerError(
    `provider ${op}: ${field} ${JSON.stringify(value)?.slice(0, 60) ?? 'undefined'} is not a value pixflow knows`,
    { op, field, endpoint: op },
  );

/** "", null and absent all mean "empty" in the document. */
const present = (v: string | null | undefined): string | undefined =>
  v === null || v === undefined || v.trim() === '' ? undefined : v;

/** A flag as a boolean or its text ("true", "false", "sim", "nao", "1", "0"); undefined if neither. */
function flag(v: boolean | string | null | undefined): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v !== 'string') return undefined;
  const w = normaliseWord(v);
  if (['true', 'sim', 's', 'yes', '1'].includes(w)) return true;
  if (['false', 'nao', 'n', 'no', '0'].includes(w)) return false;
  return undefined;
}

export function toKycFacts(answer: KycAnswer): KycFacts {
  const status = present(answer.status);
  const under18 = flag(answer.is_under_18);
  // Who is under age cannot be guessed: an answer without the flag decides nothing.
  if (under18 === undefined) throw unclassified('kyc', 'is_under_18', answer.is_under_18);
  const normalised = status === undefined ? null : normaliseWord(status);
  return {
    status: normalised,
    under18,
    deceased: present(answer.date_death) !== undefined,
    restricted: normalised === 'consta_lista_restritiva',
    pep: flag(answer.is_pep) === true,
    record: answer as Record<string, unknown>,
  };
}

const LIVENESS_WORDS = new Map<string, LivenessStatus>(LIVENESS_STATUSES.map((s) => [s, s]));

/** A liveness status word in any letter case; undefined when it is none of the document's. */
export function livenessStatusOf(word: unknown): LivenessStatus | undefined {
  return typeof word === 'string' ? LIVENESS_WORDS.get(normaliseWord(word)) : undefined;
}

export function toLivenessSession(res: LivenessAnswer): LivenessSession {
  const status = livenessStatusOf(res.status_verification);
  if (!status) throw unclassified('liveness', 'status_verification', res.status_verification);
  return {
    transactionId: res.transaction_id,
    url: res.action.url,
    qrcode: res.action.qrcode ?? res.action.url,
    type: res.action.type,
    status,
  };
}

export function toDepositCharge(res: DepositCreateResult & { amountCentavos: number }): DepositCharge {
  return {
    txid: res.txid,
    payload: res.pixPayload,
    expiresAt: res.expiry,
    amountCentavos: res.amountCentavos,
  };
}

const digits = (v: string) => v.replace(/\D/g, '');

export function toDepositLookup(tx: Transaction): DepositLookup {
  const standing = standingOf(tx.status);
  const providerStatus = tx.status ?? '';
  if (standing === undefined) throw unclassified('deposit_inquiry', 'status', tx.status);
  // A charge that failed or expired was not paid: to the flow that is the same as not yet.
  if (standing !== 'settled') return { state: 'pending', providerStatus };
  const payerCpf = present(tx.cpf_payer);
  return {
    state: 'paid',
    e2eId: present(tx.e2eId) ?? '',
    amountCentavos: tx.amountCentavos,
    providerStatus,
    ...(present(tx.paidAt) ? { paidAt: tx.paidAt } : {}),
    ...(present(tx.name_payer) ? { payerName: tx.name_payer as string } : {}),
    ...(payerCpf ? { payerCpf: digits(payerCpf) } : {}),
  };
}

export function toPayoutAccepted(res: WithdrawCreateResult): PayoutAccepted {
  // A body that says, inside a 2xx, that the request failed: taken neither as sent nor as refused.
  const code = res.responseStatus == null ? undefined : Number(res.responseStatus);
  if (code !== undefined && (!Number.isInteger(code) || code >= 300)) {
    throw unclassified('withdraw', 'responseStatus', res.responseStatus);
  }
  const e2eId = present(res.e2eId);
  return e2eId ? { e2eId } : {};
}

export function toPayoutLookup(tx: Transaction): PayoutLookup {
  const standing = standingOf(tx.status);
  const providerStatus = tx.status ?? '';
  if (standing === undefined) throw unclassified('withdraw_inquiry', 'status', tx.status);
  const e2eId = present(tx.e2eId);
  const base = { providerStatus, ...(e2eId ? { e2eId } : {}) };
  if (standing === 'settled')
    return { state: 'completed', ...base, ...(tx.paidAt ? { paidAt: tx.paidAt } : {}) };
  if (standing === 'failed')
    return { state: 'failed', ...base, ...(present(tx.reason) ? { reason: tx.reason as string } : {}) };
  return { state: 'processing', ...base };
}

/** The document's receipt codes (wire/schemas.ts) in pixflow's words. */
const RECEIPT_STATE: Record<number, PayoutReceipt['state']> = {
  [receiptStatusCodes.notFound]: 'not_found',
  [receiptStatusCodes.requested]: 'requested',
  [receiptStatusCodes.failed]: 'failed',
  [receiptStatusCodes.processing]: 'processing',
  [receiptStatusCodes.completed]: 'completed',
};

/** The receipt's code 0-4, as a number or its text; "", null or absent is none. */
function receiptCode(status: ReceiptResult['status']): number | undefined | 'unreadable' {
  if (status === null || status === undefined || status === '') return undefined;
  const code = typeof status === 'number' ? status : /^\s*\d+\s*$/.test(status) ? Number(status) : Number.NaN;
  return RECEIPT_STATE[code] === undefined ? 'unreadable' : code;
}

/**
 * The receipt in pixflow's words. A code none of the document's (or none at all) is returned as
 * `undefined` standing: the caller decides with the inquiry, which is read beside it.
 */
export function toPayoutReceipt(res: ReceiptResult): PayoutReceipt {
  const code = receiptCode(res.status);
  if (code === 'unreadable') return { state: 'unreadable', value: res.status };
  const image = present(res.invoice)?.replace(/^data:image\/\w+;base64,/, '');
  const paidAt = present(res.datetimepayed);
  if (code === undefined) {
    // No code: an image says it completed; nothing says nothing yet.
    return image
      ? { state: 'completed', imageBase64: image, ...(paidAt ? { paidAt } : {}) }
      : { state: 'requested' };
  }
  return {
    state: RECEIPT_STATE[code] as PayoutReceipt['state'],
    code,
    ...(image ? { imageBase64: image } : {}),
    ...(paidAt ? { paidAt } : {}),
  };
}

/** A webhook message as a hint, in pixflow's words. */
export function toPaymentNotification(msg: {
  id: string;
  type: 'deposit' | 'withdraw';
  action: 'requested' | 'updated';
  partner_id: string;
}): PaymentNotification {
  return {
    kind: msg.type === 'deposit' ? 'deposit' : 'withdrawal',
    action: msg.action,
    id: msg.id,
    partnerId: msg.partner_id,
  };
}

/** A liveness callback in pixflow's words (its body is the sandbox's documented choice). */
export function toLivenessCallback(cb: {
  transaction_id: string;
  correlation_id: string;
  document: string;
  status_verification: string;
  status_onboarding?: string | null;
  action_type: 'onboarding' | 'biometric_identification';
  event: string;
  datetime: string;
  partner_id: string;
}): LivenessCallback {
  const status = livenessStatusOf(cb.status_verification);
  return {
    transactionId: cb.transaction_id,
    correlationId: cb.correlation_id,
    cpf: cb.document,
    status: status ?? 'processing',
    step: cb.status_onboarding ?? '',
    ...(status ? {} : { unclassifiedStatus: cb.status_verification }),
    type: cb.action_type,
    event: cb.event,
    at: cb.datetime,
    partnerId: cb.partner_id,
  };
}
