import { randomBytes } from 'node:crypto';
import { generate as generateCpf } from '@fnando/cpf';
import { ownCpfKey } from '../scripts/people';
import type { Bench } from './harness';
import type { Completions, Launched } from './load';
import { runTag } from './settings';
import { API_KEY, WEBHOOK_PARTNER_ID } from './stack';

// How the bench drives pixflow and reads what it did: its API, the provider sandbox's control
// endpoints, the flows table, the worker's /metrics.

export type FlowType = 'deposit' | 'withdrawal';

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

/** A JSON request with the bench's API key; the answer's status and parsed body. */
export async function http(url: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') {
  const res = await fetch(url, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

export interface SandboxState {
  counters: { tokenRequests: number };
  deposits: { txid: string; payedAt: string }[];
  withdrawals: { txid: string; payedAt: string; status: string }[];
}

export const sandboxState = async (b: Bench) =>
  (await http(`${b.stack.sandbox}/sandbox/state`)).body as SandboxState;

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

export async function postDeposit(b: Bench): Promise<Launched> {
  const txid = newTxid();
  const r = await http(`${b.stack.api}/v1/deposits`, {
    txid,
    amountCentavos: 100 + (txidSeq % 9000),
    client: b.people.next(),
  });
  return { id: txid, ok: r.status === 201, status: r.status };
}

export async function postWithdrawal(b: Bench): Promise<Launched> {
  const id = `bw-${runTag}-${++txidSeq}`;
  const amountCentavos = 100 + (txidSeq % 9000);
  // To the person's own CPF key, within their daily limit.
  const client = b.people.payee(amountCentavos);
  const r = await http(`${b.stack.api}/v1/withdrawals`, {
    transactionId: id,
    amountCentavos,
    ...ownCpfKey(client),
    client,
  });
  return { id, ok: r.status === 202, status: r.status };
}

/** A step's completions: flows of this type counted done at their `completed` row's `updated_at`. */
export const completedFlows =
  (b: Bench, type: FlowType): Completions =>
  async (ids) => {
    if (!ids.length) return [];
    const r = await b.pool.query<{ t: number }>(
      `SELECT (extract(epoch from updated_at) * 1000)::float8 AS t FROM flows
       WHERE type = $1 AND status = 'completed' AND business_id = ANY($2)`,
      [type, ids],
    );
    return r.rows.map((x) => Number(x.t));
  };

/** When each flow of `ids` completed (ms), by id. */
export async function completedAt(b: Bench, type: FlowType, ids: string[]): Promise<Map<string, number>> {
  const r = await b.pool.query<{ id: string; t: number }>(
    `SELECT business_id AS id, (extract(epoch from updated_at) * 1000)::float8 AS t FROM flows
     WHERE type = $1 AND status = 'completed' AND business_id = ANY($2)`,
    [type, ids],
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
 * Inquiries the worker has made so far (the provider calls counted on its /metrics). A worker
 * busy with thousands of open flows may miss a read: it is asked again for up to a minute
 * before the run gives up.
 */
export async function inquiriesMade(b: Bench): Promise<number> {
  const url = `http://127.0.0.1:${b.stack.ports.WORKER_HTTP_PORT}/metrics`;
  const deadline = Date.now() + 60_000;
  let text: string | undefined;
  while (text === undefined) {
    try {
      text = await (await fetch(url, { signal: AbortSignal.timeout(10_000) })).text();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
  let n = 0;
  for (const m of text.matchAll(/^pixflow_provider_calls_total\{[^}]*endpoint="inquiry"[^}]*\} (\S+)$/gm)) {
    n += Number(m[1]);
  }
  return n;
}
