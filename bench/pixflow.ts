import { randomBytes } from 'node:crypto';
import { generate as generateCpf } from '@fnando/cpf';
import { cpfHash } from '../common/pii';
import { newCpf, ownCpfKey } from '../test/helpers/people';
import type { Bench } from './harness';
import type { Completions, Launched } from './load';
import { runTag, settings, sleep } from './settings';
import { API_KEY, WEBHOOK_PARTNER_ID } from './stack';

// How the bench drives pixflow and reads what it did: its API, the provider sandbox's control
// endpoints, the flows table.

export type FlowType = 'deposit' | 'withdrawal' | 'onboarding';

/** A person pixflow has not seen (the deposits opened through the Temporal client). */
export const person = () => ({
  externalId: `ext-${randomBytes(4).toString('hex')}`,
  cpf: generateCpf(),
  email: 'bench@example.com',
  name: 'Ana Souza',
});

let txidSeq = 0;
/** Digits only (the provider's txid), unique in this run. */
export const newTxid = () =>
  `${Date.now()}${String(++txidSeq).padStart(7, '0')}${Math.floor(Math.random() * 1e6)}`;

/**
 * A JSON request with the bench's API key; the answer's status and parsed body. A request not
 * answered within `timeoutMs` is abandoned: status "timeout".
 */
export async function http(
  url: string,
  body?: unknown,
  method = body === undefined ? 'GET' : 'POST',
  timeoutMs = 60_000,
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers, read field by field
): Promise<{ status: number | 'timeout'; body: any }> {
  let res: Response;
  try {
    res = await fetch(url, {
      method,
      headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (err) {
    if ((err as Error).name === 'TimeoutError') return { status: 'timeout', body: undefined };
    throw err;
  }
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export interface SandboxState {
  counters: {
    tokenRequests: number;
    requests: Partial<Record<string, number>>;
    notificationsDropped: number;
  };
  deposits: { txid: string; createdAt: string; payedAt: string; status: string }[];
  withdrawals: { txid: string; payedAt: string; status: string }[];
}

export const sandboxState = async (b: Bench) =>
  (await http(`${b.stack.sandbox}/sandbox/state`)).body as SandboxState;

/** Calls the provider (the sandbox) has answered so far, by endpoint: its own count, not the worker's. */
export const providerCalls = async (b: Bench) => (await sandboxState(b)).counters.requests;

/** The sandbox pays deposits / settles payouts this long after creating them (null: never). */
export const setAuto = (
  b: Bench,
  payDepositsAfterMs: number | null,
  settleWithdrawalsAfterMs: number | null,
) => http(`${b.stack.sandbox}/sandbox/auto`, { payDepositsAfterMs, settleWithdrawalsAfterMs });

/** The sandbox stops sending notifications and drops those it had not sent. */
export const stopNotifications = (b: Bench) =>
  http(`${b.stack.sandbox}/sandbox/notifications`, undefined, 'DELETE');

/** The sandbox sends its notifications to pixflow's ingress again. */
export const notifyIngress = (b: Bench) =>
  http(`${b.stack.sandbox}/sandbox/notifications`, { url: b.stack.ingress, partnerId: WEBHOOK_PARTNER_ID });

/** POST /v1/deposits for the next person, abandoned after the client's timeout. */
export async function postDeposit(b: Bench): Promise<Launched> {
  const txid = newTxid();
  const r = await http(
    `${b.api()}/v1/deposits`,
    { txid, amountCentavos: 100 + (txidSeq % 9000), client: b.people.next() },
    'POST',
    settings.clientTimeoutMs,
  );
  return { id: txid, ok: r.status === 201, status: r.status };
}

/**
 * The payer pays a deposit's QR (its notification lost on the way when `dropNotification`); when
 * the provider says it was paid (ms), or undefined when it refused (expired, unknown).
 */
export async function payDeposit(b: Bench, txid: string, dropNotification: boolean) {
  const r = await http(`${b.stack.sandbox}/sandbox/deposits/${txid}/pay`, { dropNotification });
  return r.status === 200 ? Date.parse(r.body.payedAt) : undefined;
}

export async function postWithdrawal(b: Bench): Promise<Launched> {
  const id = `bw-${runTag}-${++txidSeq}`;
  const amountCentavos = 100 + (txidSeq % 9000);
  // To the person's own CPF key, within their daily limit.
  const client = b.people.payee(amountCentavos);
  const r = await http(
    `${b.api()}/v1/withdrawals`,
    { transactionId: id, amountCentavos, ...ownCpfKey(client), client },
    'POST',
    settings.clientTimeoutMs,
  );
  return { id, ok: r.status === 202, status: r.status };
}

/** A flow's row status once it is done: an onboarding ends approved, the others completed. */
const doneStatus = (type: FlowType) => (type === 'onboarding' ? 'approved' : 'completed');

/** A step's completions: flows of this type counted done at their done row's `updated_at`. */
export const completedFlows =
  (b: Bench, type: FlowType): Completions =>
  async (ids) => [...(await completedAt(b, type, ids)).values()];

/** When each flow of `ids` (business ids) completed (ms), by id. */
export async function completedAt(b: Bench, type: FlowType, ids: string[]): Promise<Map<string, number>> {
  if (!ids.length) return new Map();
  const r = await b.pool.query<{ id: string; t: number }>(
    `SELECT business_id AS id, (extract(epoch from updated_at) * 1000)::float8 AS t FROM flows
     WHERE type = $1 AND status = $2 AND business_id = ANY($3)`,
    [type, doneStatus(type), ids],
  );
  return new Map(r.rows.map((x) => [x.id, Number(x.t)]));
}

/** How many of these deposits the flows table shows awaiting payment. */
export const awaitingPayment = async (b: Bench, txids: string[]) =>
  (
    await b.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM flows WHERE type = 'deposit' AND status = 'awaiting_payment' AND business_id = ANY($1)`,
      [txids],
    )
  ).rows[0]?.n ?? 0;

/**
 * An onboarding as a person makes one: the sandbox is told their liveness ends approved (no
 * manual review), POST /v1/onboardings, then, once the provider has their liveness session (the
 * link the flow asked for), they finish it on their phone. Its id is the flows row's business
 * id (the CPF's keyed hash).
 */
export async function onboardSomeone(b: Bench): Promise<Launched> {
  const cpf = newCpf();
  const id = cpfHash(cpf, b.config.PII_HASH_KEY);
  await http(`${b.stack.sandbox}/sandbox/documents/${cpf}/liveness`, { outcome: 'approved_biometrics_pass' });
  const started = Date.now();
  const r = await http(
    `${b.api()}/v1/onboardings`,
    { cpf, plan: 'plan_basic', event: 'onboarding' },
    'POST',
    settings.clientTimeoutMs,
  );
  if (r.status !== 201) return { id, ok: false, status: r.status };
  const latencyMs = Date.now() - started;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const done = await http(`${b.stack.sandbox}/sandbox/liveness/complete`, { document: cpf });
    if (done.status === 200) return { id, ok: true, latencyMs };
    await sleep(200);
  }
  return { id, ok: false, status: 'no liveness session' };
}
