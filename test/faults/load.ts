import { randomBytes } from 'node:crypto';
import { decimalTextToCentavos } from '../../common/money';
import { toApiPixTxid } from '../../connectors/api-pix';
import { depositFinalStatuses, depositWorkflowId } from '../../contracts/deposit';
import { brandScopedId } from '../../contracts/flow';
import { onboardingFinalStatuses } from '../../contracts/onboarding';
import { withdrawalFinalStatuses, withdrawalWorkflowId } from '../../contracts/withdrawal';
import { parseNotification } from '../../ingress/notification';
import { newCpf, ownCpfKey, type People } from '../helpers/people';
import { API_KEY, BRAND_B, type BrandSide, DEFAULT_BRAND, type Harness, PII_HASH_KEY } from './harness';

// Mixed load through the API, settled by the sandbox itself, and the checks of every flow
// against the sandbox's own records, our API and the Postgres inbox. Deposits are routed to the
// first provider, then to the API Pix PSP: a deposit's payer pays it where its QR came from (read
// from the deposit's `connector`), and its check asks that PSP. Every third deposit and
// withdrawal is brand B's, sent with B's key and settled by B's own sandbox; each flow is checked
// at its own brand's provider, and against the other brand's for a charge or payout there.

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface LoadSpec {
  deposits: number;
  withdrawals: number;
  onboardings: number;
  /** Deposits created while the sandbox does not pay by itself: they expire. */
  unpaidDeposits: number;
  /** Withdrawals the sandbox fails instead of settling. */
  failedWithdrawals: number;
  /** Onboardings the sandbox's reviewer refuses (the rest are approved). */
  refusedOnboardings: number;
  /** Parallel callers. */
  concurrency: number;
  /**
   * Open load: the mixed phase's requests start one every this many ms, however many are still
   * waiting (as customers keep arriving during an outage), instead of `concurrency` callers.
   */
  arrivalMs?: number;
}

/** A deposit request as its caller saw it: every answer, the time to the QR, where it went. */
export interface DepositRecord {
  txid: string;
  /** Whether its payer pays it (the unpaid ones must expire). */
  paid: boolean;
  sentAt: number;
  /** When the request that got the QR was sent, and when its answer came; unset without one. */
  acceptedSentAt?: number;
  answeredAt?: number;
  /** The status of every answer, in order (0: no answer). */
  statuses: number[];
  /** The connector that made its charge, from the deposit's state after the QR. */
  connector?: string;
}

/** The connectors deposits are routed to, as the deposit's state names them. */
export const FIRST_PROVIDER = 'identity-payments';
export const API_PIX = 'api-pix';

export interface Load {
  scenario: string;
  deposits: string[];
  withdrawals: string[];
  onboardings: string[];
  /** Requests the callers sent again (same ids) after an error or a timeout. */
  retries: number;
  /** Answers 5xx (or no answer) the callers got from our API. */
  apiErrors: number;
  /** Anything else than the expected answer that was not retryable. */
  refusals: string[];
  /** Every deposit request, by txid. */
  depositRecords: Map<string, DepositRecord>;
  /** When each withdrawal was first asked, by transactionId. */
  withdrawalsSentAt: Map<string, number>;
  /** When the mixed phase began (after the unpaid deposits and the failing payouts). */
  mixedAt?: number;
  /** The brand of each deposit and withdrawal, by `deposit:<txid>` or `withdrawal:<id>`; unset: default. */
  brands: Map<string, string>;
  /** Money flows sent so far: every third is brand B's. */
  sent: number;
}

/** The brand of a flow of the load (onboardings are the default brand's). */
export const brandOfFlow = (load: Load, key: string) => load.brands.get(key) ?? DEFAULT_BRAND;

/** The next money flow's brand: every third one brand B's. */
function nextBrand(load: Load): string {
  load.sent += 1;
  return load.sent % 3 === 0 ? BRAND_B : DEFAULT_BRAND;
}

/** A flow's workflow id, under its brand. */
export function workflowIdOf(load: Load, key: string): string {
  const [type, id] = key.split(':') as [string, string];
  const brand = brandOfFlow(load, key);
  if (type === 'deposit') return brandScopedId(depositWorkflowId(id), brand);
  if (type === 'withdrawal') return brandScopedId(withdrawalWorkflowId(id), brand);
  return `${type}-${id}`;
}

/** A payout of the load is at most this (below the biometric step-up bound). */
export const MAX_PAYOUT_CENTAVOS = 100_099;

const digits = (n: number) => {
  let s = String(1 + Math.floor(Math.random() * 9));
  while (s.length < n) s += String(Math.floor(Math.random() * 10));
  return s;
};

// biome-ignore lint/suspicious/noExplicitAny: parsed JSON answers, read field by field
export type Json = any;

export interface Reply {
  status: number;
  body: Json;
}

export async function http(
  url: string,
  init: { method?: string; body?: unknown; timeoutMs?: number; key?: string } = {},
) {
  const res = await fetch(url, {
    method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
    headers: {
      authorization: `Bearer ${init.key ?? API_KEY}`,
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: init.body === undefined ? undefined : JSON.stringify(init.body),
    signal: AbortSignal.timeout(init.timeoutMs ?? 20_000),
  });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (an image)
  }
  return { status: res.status, body } as Reply;
}

/** A read with the default brand's key, or the given brand's. */
export const apiGet = (h: Harness, p: string, brand = DEFAULT_BRAND) =>
  http(`${h.api}${p}`, { key: h.side(brand).key });

/**
 * The idempotency contract from the caller's side: send the same request (same ids) again after
 * a network error, a timeout, a 5xx or a 429, until an accepted answer or the deadline.
 */
export async function reliably(
  load: Load,
  what: string,
  send: () => Promise<Reply>,
  accepted: (r: Reply) => boolean,
  deadlineMs = 150_000,
): Promise<Reply | undefined> {
  const deadline = Date.now() + deadlineMs;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) load.retries += 1;
    let r: Reply | undefined;
    try {
      r = await send();
    } catch {
      load.apiErrors += 1;
    }
    if (r && accepted(r)) return r;
    if (r && r.status < 500 && r.status !== 429 && r.status !== 408) {
      load.refusals.push(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
      return undefined;
    }
    if (r && r.status >= 500) load.apiErrors += 1;
    if (Date.now() > deadline) {
      load.refusals.push(
        `${what}: no accepted answer before the deadline (last ${r?.status ?? 'no answer'})`,
      );
      return undefined;
    }
    await sleep(Math.min(3000, 300 * 2 ** Math.min(attempt, 4)));
  }
}

/**
 * A check's read: the API's rate limit (429 with Retry-After) is an answer to wait on, not a
 * problem of the flow being checked; the limit applies to the checker as to any caller.
 */
async function fetchHonouringLimit(
  url: string,
  key: string,
  deadlineMs = 120_000,
): Promise<Response | undefined> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const r = await fetch(url, {
      headers: { authorization: `Bearer ${key}` },
      signal: AbortSignal.timeout(10_000),
    }).catch(() => undefined);
    if (r?.status !== 429 || Date.now() > deadline) return r;
    await r.arrayBuffer();
    await sleep(1_000 * Math.max(1, Number(r.headers.get('retry-after')) || 1));
  }
}

async function pool<T>(items: T[], concurrency: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const item = items[next++] as T;
        await fn(item);
      }
    }),
  );
}

/**
 * Starts the mixed load and returns once every request was accepted and every onboarding's
 * liveness was completed and reviewed in the sandbox. Unpaid deposits and to-be-failed
 * withdrawals go first, while the sandbox does nothing by itself; then the sandbox pays and
 * settles everything else on its own. Deposits and payouts are spread over `people`, onboarded
 * before the scenarios; each payout goes to its person's own CPF key.
 */
/** A scenario's load before any request. */
export const newLoad = (scenario: string): Load => ({
  scenario,
  deposits: [],
  withdrawals: [],
  onboardings: [],
  retries: 0,
  apiErrors: 0,
  refusals: [],
  depositRecords: new Map(),
  withdrawalsSentAt: new Map(),
  brands: new Map(),
  sent: 0,
});

/** How long after its QR the payer pays a deposit (as the first provider's sandbox does by itself). */
const PAY_AFTER_MS = 1_500;

/**
 * The payer of a deposit whose QR came from the API Pix PSP: pays its cob at the emulation
 * (`POST /sandbox/cob/{txid}/pay`, the cob's txid being pixflow's as the connector maps it).
 */
async function payAtApiPix(h: Harness, load: Load, txid: string): Promise<void> {
  await sleep(PAY_AFTER_MS);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const r = await h.apiPixCall(`/sandbox/cob/${toApiPixTxid(txid)}/pay`, {}).catch(() => undefined);
    if (r?.status === 200) return;
    if (r && r.status !== 503 && r.status !== 429) {
      load.refusals.push(
        `deposit ${txid}: the API Pix payer could not pay (${r.status} ${JSON.stringify(r.body)})`,
      );
      return;
    }
    if (Date.now() > deadline) {
      load.refusals.push(`deposit ${txid}: the API Pix payer could not pay before the deadline`);
      return;
    }
    await sleep(500);
  }
}

/** The connector that made a deposit's charge, as its state says once the QR exists. */
async function connectorOf(h: Harness, txid: string, brand: string): Promise<string | undefined> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const r = await apiGet(h, `/v1/deposits/${txid}`, brand).catch(() => undefined);
    const state = r?.status === 200 ? (r.body.state ?? r.body) : undefined;
    // Absent on a state with its QR: the first provider (a run from before routing).
    if (state?.qr) return state.connector ?? FIRST_PROVIDER;
    await sleep(r?.status === 429 ? 1_000 : 250);
  }
  return undefined;
}

export async function runLoad(
  h: Harness,
  scenario: string,
  spec: LoadSpec,
  people: People,
  load: Load = newLoad(scenario),
): Promise<Load> {
  const tag = scenario.replace(/[^a-z0-9]/gi, '').slice(0, 12);
  /** The API Pix payers at work: the load is done once they paid. */
  const payments: Array<Promise<void>> = [];
  const deposit = async (txid: string, paid: boolean) => {
    const brand = nextBrand(load);
    load.brands.set(`deposit:${txid}`, brand);
    const { key } = h.side(brand);
    const body = {
      txid,
      amountCentavos: 100 + Math.floor(Math.random() * 100_000),
      client: people.next(),
    };
    load.deposits.push(txid);
    const record: DepositRecord = { txid, paid, sentAt: Date.now(), statuses: [] };
    load.depositRecords.set(txid, record);
    const answer = await reliably(
      load,
      `deposit ${txid}`,
      async () => {
        record.acceptedSentAt = Date.now();
        try {
          const r = await http(`${h.api}/v1/deposits`, { body, key });
          record.statuses.push(r.status);
          return r;
        } catch (err) {
          record.statuses.push(0);
          throw err;
        }
      },
      (r) => r.status === 201 || r.status === 200,
    );
    if (!answer) return;
    record.answeredAt = Date.now();
    record.connector = await connectorOf(h, txid, brand);
    if (!record.connector) load.refusals.push(`deposit ${txid}: its state never named its connector`);
    // The first provider's sandbox pays its own deposits by itself (phase 2).
    if (paid && record.connector === API_PIX) payments.push(payAtApiPix(h, load, txid));
  };
  const withdrawal = async (id: string) => {
    const brand = nextBrand(load);
    load.brands.set(`withdrawal:${id}`, brand);
    const { key } = h.side(brand);
    const amountCentavos = 100 + Math.floor(Math.random() * (MAX_PAYOUT_CENTAVOS - 99));
    const client = people.payee(amountCentavos);
    const body = { transactionId: id, amountCentavos, ...ownCpfKey(client), client };
    load.withdrawals.push(id);
    load.withdrawalsSentAt.set(id, Date.now());
    await reliably(
      load,
      `withdrawal ${id}`,
      () => http(`${h.api}/v1/withdrawals`, { body, key }),
      (r) => r.status === 202,
    );
  };

  const unpaid = Array.from({ length: spec.unpaidDeposits }, () => digits(24));
  const paid = Array.from({ length: spec.deposits - spec.unpaidDeposits }, () => digits(24));
  const failing = Array.from(
    { length: spec.failedWithdrawals },
    (_, i) => `flt-${tag}-f${i}-${randomBytes(4).toString('hex')}`,
  );
  const settling = Array.from(
    { length: spec.withdrawals - spec.failedWithdrawals },
    (_, i) => `flt-${tag}-s${i}-${randomBytes(4).toString('hex')}`,
  );
  const cpfs = Array.from({ length: spec.onboardings }, () => newCpf());

  // Phase 1: nothing settles by itself, at either brand's provider.
  for (const side of h.sides)
    await side.control('/sandbox/auto', { payDepositsAfterMs: null, settleWithdrawalsAfterMs: null });
  await pool(unpaid, spec.concurrency, (txid) => deposit(txid, false));
  await pool(failing, spec.concurrency, withdrawal);
  // The provider fails these payouts once they exist there (an "operator" on the provider side).
  const failer = failWhenCreated(h, failing);
  // Phase 2: each brand's sandbox pays deposits and settles payouts by itself.
  for (const side of h.sides)
    await side.control('/sandbox/auto', { payDepositsAfterMs: PAY_AFTER_MS, settleWithdrawalsAfterMs: 2000 });
  load.mixedAt = Date.now();
  const mixed: Array<() => Promise<void>> = [];
  const n = Math.max(paid.length, settling.length, cpfs.length);
  for (let i = 0; i < n; i++) {
    const p = paid[i];
    const s = settling[i];
    const c = cpfs[i];
    if (p) mixed.push(() => deposit(p, true));
    if (s) mixed.push(() => withdrawal(s));
    if (c) mixed.push(() => onboarding(h, load, c, i < spec.refusedOnboardings ? 'refuse' : 'approve'));
  }
  if (spec.arrivalMs === undefined) await pool(mixed, spec.concurrency, (f) => f());
  else {
    const started: Array<Promise<void>> = [];
    for (const f of mixed) {
      started.push(f());
      await sleep(spec.arrivalMs);
    }
    await Promise.all(started);
  }
  await failer;
  await Promise.all(payments);
  return load;
}

async function failWhenCreated(h: Harness, ids: string[]) {
  const pending = new Set(ids);
  const deadline = Date.now() + 300_000;
  while (pending.size > 0 && Date.now() < deadline) {
    for (const side of h.sides) {
      const state = (await side.control('/sandbox/state', undefined, 'GET').catch(() => undefined)) as Json;
      for (const w of state?.withdrawals ?? []) {
        if (!pending.has(w.txid)) continue;
        if (w.status === 'processing') {
          await side
            .control(`/sandbox/withdrawals/${w.txid}/fail`, { reason: 'fault suite: refused' })
            .catch(() => {});
        }
        pending.delete(w.txid);
      }
    }
    if (pending.size > 0) await sleep(1000);
  }
}

/** Starts an onboarding, then the person finishes liveness and the provider's reviewer decides. */
async function onboarding(h: Harness, load: Load, cpf: string, decision: 'approve' | 'refuse') {
  load.onboardings.push(cpf);
  const started = await reliably(
    load,
    `onboarding ${cpf.slice(0, 3)}***`,
    () => http(`${h.api}/v1/onboardings`, { body: { cpf, plan: 'plan_basic', event: 'fault-suite' } }),
    (r) => r.status === 201 || r.status === 200,
  );
  if (!started) return;
  // The link exists once KYC passed and the flow asked the provider for one.
  const deadline = Date.now() + 150_000;
  let completed = false;
  while (Date.now() < deadline) {
    const r = await apiGet(h, `/v1/onboardings/${cpf}`).catch(() => undefined);
    const status = r?.status === 200 ? r.body.state?.status : undefined;
    if (status === 'awaiting_liveness' || status === 'awaiting_review') {
      if (!completed) {
        const c = await fetch(`${h.sandbox}/sandbox/liveness/complete`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ document: cpf }),
        }).catch(() => undefined);
        completed = c?.ok === true;
        if (completed) await sleep(1000);
        continue;
      }
      const rv = await fetch(`${h.sandbox}/sandbox/liveness/review`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ document: cpf, decision }),
      }).catch(() => undefined);
      if (rv?.ok) return;
    } else if (status && ['approved', 'rejected', 'expired'].includes(status)) {
      return;
    }
    await sleep(1000);
  }
  load.refusals.push(`onboarding ${cpf.slice(0, 3)}***: liveness never completed in the sandbox`);
}

const TERMINAL: Record<'deposit' | 'withdrawal' | 'onboarding', readonly string[]> = {
  deposit: depositFinalStatuses,
  withdrawal: withdrawalFinalStatuses,
  onboarding: onboardingFinalStatuses,
};

/** Polls every flow until all are terminal or the deadline passes; returns the final states. */
export async function waitTerminal(h: Harness, load: Load, timeoutMs: number) {
  const states = new Map<string, Json>();
  const all = [
    ...load.deposits.map((id) => ({
      key: `deposit:${id}`,
      path: `/v1/deposits/${id}`,
      done: TERMINAL.deposit,
    })),
    ...load.withdrawals.map((id) => ({
      key: `withdrawal:${id}`,
      path: `/v1/withdrawals/${id}`,
      done: TERMINAL.withdrawal,
    })),
    ...load.onboardings.map((id) => ({
      key: `onboarding:${id}`,
      path: `/v1/onboardings/${id}`,
      done: TERMINAL.onboarding,
    })),
  ];
  const deadline = Date.now() + timeoutMs;
  let open = all;
  while (open.length > 0 && Date.now() < deadline) {
    const still: typeof all = [];
    await pool(open, 6, async (f) => {
      const r = await apiGet(h, f.path, brandOfFlow(load, f.key)).catch(() => undefined);
      const state = r?.status === 200 ? (r.body.state ?? r.body) : undefined;
      if (state) states.set(f.key, state);
      if (!state || !f.done.includes(state.status)) still.push(f);
    });
    open = still;
    if (open.length > 0) await sleep(1000);
  }
  return { states, open: open.map((f) => f.key) };
}

export interface CheckResult {
  problems: string[];
  /** Flows that did not end as the sandbox says they should (or not at all). */
  lost: number;
  duplicatePayouts: number;
  paidDeposits: number;
  expiredDeposits: number;
  /** Deposits whose charge the API Pix PSP made (among the paid and expired ones). */
  apiPixDeposits: number;
  settledWithdrawals: number;
  failedWithdrawals: number;
  approved: number;
  rejected: number;
  notificationsAcknowledged: number;
  notificationsInInbox: number;
  /** The deposits and withdrawals of each brand. */
  byBrand: Record<string, { deposits: number; withdrawals: number }>;
  /** Both brands' sandboxes' counters, added up. */
  sandbox: { counters: Json; notificationsDropped: number; notificationsGaveUp: number };
}

/** A brand's provider's records, as its sandbox holds them. */
interface ProviderRecords {
  deposits: Map<string, Json>;
  withdrawals: Map<string, Json>;
  payouts: Record<string, number>;
  state: Json;
}

async function recordsAt(side: BrandSide): Promise<ProviderRecords> {
  const state = (await side.control('/sandbox/state', undefined, 'GET')) as Json;
  return {
    deposits: new Map(state.deposits.map((d: Json) => [d.txid, d])),
    withdrawals: new Map(state.withdrawals.map((w: Json) => [w.txid, w])),
    payouts: state.counters.payouts as Record<string, number>,
    state,
  };
}

/** The counters of several sandboxes, their numbers added up. */
function addedUp(counters: Json[]): Json {
  const sum: Record<string, unknown> = {};
  for (const c of counters)
    for (const [k, v] of Object.entries(c as Record<string, unknown>)) {
      if (typeof v === 'number') sum[k] = ((sum[k] as number | undefined) ?? 0) + v;
      else if (!(k in sum)) sum[k] = v;
    }
  return sum;
}

/** Every flow against the sandbox's records, the payouts counted, the inbox against the acks. */
export async function check(h: Harness, load: Load, timeoutMs: number): Promise<CheckResult> {
  const { states, open } = await waitTerminal(h, load, timeoutMs);
  const problems: string[] = [...load.refusals];
  const lostKeys = new Set<string>(open);
  for (const k of open) {
    const type = k.split(':')[0];
    const why = type === 'onboarding' ? '' : `; ${await h.explain(workflowIdOf(load, k))}`;
    problems.push(`${k} never reached a terminal state (last: ${states.get(k)?.status})${why}`);
  }
  const records = new Map<string, ProviderRecords>();
  for (const side of h.sides) records.set(side.brand, await recordsAt(side));
  const recordsOf = (brand: string) => records.get(brand) as ProviderRecords;
  const otherThan = (brand: string) => (brand === DEFAULT_BRAND ? BRAND_B : DEFAULT_BRAND);
  const sb = recordsOf(DEFAULT_BRAND).state;
  const counters = addedUp([...records.values()].map((x) => x.state.counters));
  // The API Pix PSP's own records, read over mutual TLS as its controls are.
  const psp = await h.apiPixControl('/sandbox/state', undefined, 'GET');
  const cobs = new Map<string, Json>(psp.cobs.map((c: Json) => [c.txid, c]));
  const r: CheckResult = {
    problems,
    lost: 0,
    duplicatePayouts: 0,
    paidDeposits: 0,
    expiredDeposits: 0,
    apiPixDeposits: 0,
    settledWithdrawals: 0,
    failedWithdrawals: 0,
    approved: 0,
    rejected: 0,
    notificationsAcknowledged: 0,
    notificationsInInbox: 0,
    byBrand: Object.fromEntries(h.sides.map((side) => [side.brand, { deposits: 0, withdrawals: 0 }])),
    sandbox: {
      counters,
      notificationsDropped: counters.notificationsDropped,
      notificationsGaveUp: counters.notificationsGaveUp,
    },
  };
  const countFor = (brand: string) => r.byBrand[brand] as { deposits: number; withdrawals: number };
  const wrong = (key: string, msg: string) => {
    lostKeys.add(key);
    problems.push(`${key}: ${msg}`);
  };

  for (const txid of load.deposits) {
    const key = `deposit:${txid}`;
    const brand = brandOfFlow(load, key);
    countFor(brand).deposits += 1;
    const ours = states.get(key);
    const connector = ours?.connector ?? load.depositRecords.get(txid)?.connector ?? FIRST_PROVIDER;
    const atFirst = recordsOf(brand).deposits.get(txid);
    const cob = cobs.get(toApiPixTxid(txid));
    // One charge per deposit: a second one elsewhere is a QR the person could pay twice.
    if (atFirst && cob) wrong(key, 'charged at both providers');
    // Each brand's deposits are charged at its own accounts alone: B has none at the API Pix PSP.
    if (recordsOf(otherThan(brand)).deposits.has(txid))
      wrong(key, `brand ${brand}'s deposit charged at brand ${otherThan(brand)}'s account`);
    if (cob && brand !== DEFAULT_BRAND)
      wrong(key, `brand ${brand}'s deposit charged at the API Pix PSP, where it has no account`);
    if (connector === API_PIX) r.apiPixDeposits += 1;
    const theirs =
      connector === API_PIX
        ? cob && { status: cob.status === 'CONCLUIDA' && cob.pix?.length ? 'completed' : cob.status }
        : atFirst;
    const where = connector === API_PIX ? 'the API Pix PSP' : `brand ${brand}'s sandbox`;
    if (!theirs) {
      wrong(key, `${where} has no such deposit (its connector: ${connector})`);
      continue;
    }
    if (cob && ours && decimalTextToCentavos(cob.valor.original) !== ours.amountCentavos)
      wrong(key, `the API Pix charge is ${cob.valor.original}, the deposit ${ours.amountCentavos} centavos`);
    const paid = theirs.status === 'completed';
    if (paid) r.paidDeposits += 1;
    else r.expiredDeposits += 1;
    if (ours?.status === 'completed' && !paid) wrong(key, `reported completed without a payment at ${where}`);
    else if (ours && !open.includes(key) && ours.status !== (paid ? 'completed' : 'expired'))
      wrong(key, `ended ${ours.status}, ${where} says ${theirs.status}`);
  }

  for (const id of load.withdrawals) {
    const key = `withdrawal:${id}`;
    const brand = brandOfFlow(load, key);
    countFor(brand).withdrawals += 1;
    const ours = states.get(key);
    const theirs = recordsOf(brand).withdrawals.get(id);
    const payouts = recordsOf(brand).payouts[id] ?? 0;
    const elsewhere = recordsOf(otherThan(brand)).payouts[id] ?? 0;
    if (elsewhere > 0)
      wrong(key, `brand ${brand}'s payout sent ${elsewhere} times at brand ${otherThan(brand)}'s account`);
    if (payouts > 1) {
      r.duplicatePayouts += 1;
      wrong(key, `paid out ${payouts} times`);
    }
    if (!theirs || payouts === 0) {
      wrong(key, `brand ${brand}'s sandbox never received the payout`);
      continue;
    }
    if (theirs.status === 'completed') r.settledWithdrawals += 1;
    else if (theirs.status === 'failed') r.failedWithdrawals += 1;
    if (!ours || open.includes(key)) continue;
    if (ours.status !== theirs.status) {
      wrong(key, `ended ${ours.status}, the sandbox says ${theirs.status}`);
      continue;
    }
    if (ours.status === 'completed') {
      const receipt = await fetchHonouringLimit(
        `${h.api}/v1/withdrawals/${id}/receipt.png`,
        h.side(brand).key,
      );
      const bytes = receipt ? Buffer.from(await receipt.arrayBuffer()) : Buffer.alloc(0);
      if (receipt?.status !== 200 || bytes.subarray(1, 4).toString('latin1') !== 'PNG' || !ours.receiptStored)
        wrong(key, `completed without a stored receipt (receipt.png ${receipt?.status})`);
    }
  }

  const sessions = new Map<string, Json>();
  for (const s of sb.liveness) sessions.set(s.document, s);
  for (const cpf of load.onboardings) {
    const key = `onboarding:${cpf}`;
    const ours = states.get(key);
    const session = sessions.get(cpf);
    if (!ours || open.includes(key)) continue;
    const expected =
      session?.statusOnboarding === 'approved'
        ? 'approved'
        : session?.statusOnboarding === 'refused'
          ? 'rejected'
          : undefined;
    if (ours.status === 'approved') r.approved += 1;
    if (ours.status === 'rejected') r.rejected += 1;
    if (ours.status !== expected)
      wrong(
        `onboarding:${cpf.slice(0, 3)}***`,
        `ended ${ours.status}, the sandbox session is ${session?.statusOnboarding}`,
      );
  }

  // Every notification the ingress acknowledged (2xx) is in the inbox and was delivered, each
  // read as its brand's: the account it came through names the brand.
  const keys = new Map<string, string>();
  for (const [brand, at] of records) {
    const acked = (at.state.notifications as Json[]).filter((n) => n.status === 'delivered');
    r.notificationsAcknowledged += acked.length;
    for (const n of acked) {
      const parsed = parseNotification(undefined, n.message, new Date(), PII_HASH_KEY, brand);
      keys.set(parsed.dedupeKey, `${brand} ${n.point} #${n.seq}`);
    }
  }
  const inboxDeadline = Date.now() + 60_000;
  let missing: string[] = [];
  let undelivered: string[] = [];
  for (;;) {
    const rows = await h.pool!.query<{ dedupe_key: string; delivered: boolean }>(
      'SELECT dedupe_key, delivered_at IS NOT NULL AS delivered FROM webhook_inbox WHERE dedupe_key = ANY($1)',
      [[...keys.keys()]],
    );
    const found = new Map(rows.rows.map((row) => [row.dedupe_key, row.delivered]));
    missing = [...keys].filter(([k]) => !found.has(k)).map(([, v]) => v);
    undelivered = [...keys].filter(([k]) => found.get(k) === false).map(([, v]) => v);
    r.notificationsInInbox = found.size;
    if ((missing.length === 0 && undelivered.length === 0) || Date.now() > inboxDeadline) break;
    await sleep(1000);
  }
  for (const m of missing) problems.push(`notification ${m} acknowledged but not in the inbox`);
  for (const u of undelivered) problems.push(`notification ${u} in the inbox but never delivered`);
  r.lost = lostKeys.size;
  return r;
}
