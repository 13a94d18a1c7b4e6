import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogs } from '../../backoffice/i18n';
import { createLogger } from '../../common/logger';
import { hashPassword } from '../../common/passwords';
import { depositWorkflowId } from '../../contracts/deposit';
import { saveOperator } from '../../db/operators';
import { PROBLEM_BASE } from '../../http/problem';
import { startInboxRelay } from '../../ingress/inbox-relay';
import { expectSdkLog } from '../helpers/sdk-log';
import { type OwnDevServer, spawnDevServer } from '../helpers/temporal';
import { API_KEY, type ApiEnv, eventually, freshCpf, startApiEnv } from './support';

// The Temporal server frozen (SIGSTOP) for 15 s while deposits keep coming: every answer comes
// within the API's deadline, a 503 problem with Retry-After, and the provider's notification is
// still taken; once it thaws, the same requests again get their QR, each deposit once. The server
// is the test's own (the run's shared one is never frozen); worker, sandbox and API are real.

/** The API's bound on its Temporal calls in this test (TEMPORAL_CALL_TIMEOUT_MS). */
const DEADLINE_MS = 2_000;
/** What an answer may take beyond the deadline on a busy machine. */
const MARGIN_MS = 1_000;
const FREEZE_MS = 15_000;
/** One new deposit asked this often during the freeze, until the last one's answer is due. */
const TRICKLE_EVERY_MS = 500;
/** Far past the test: a deposit completes only through its notification, not reconciliation. */
const NO_RECONCILIATION_MS = 600_000;

let server: OwnDevServer;
let e: ApiEnv;
let relay: ReturnType<typeof startInboxRelay>;
let n = 0;
const silent = createLogger('frozen-test', 'silent');

beforeAll(async () => {
  // A workflow task the worker finished while the server was frozen has timed out there by the
  // thaw: the server no longer knows it, hands it out again, and the worker says so.
  expectSdkLog(
    (entry) => entry.meta.sdkComponent === 'core' && entry.message === 'Task not found when completing',
  );
  server = await spawnDevServer();
  e = await startApiEnv(
    { pollScheduleMs: [NO_RECONCILIATION_MS] },
    {
      temporalAddress: server.address,
      env: { TEMPORAL_CALL_TIMEOUT_MS: String(DEADLINE_MS), REQUIRE_VERIFIED_FOR_DEPOSITS: 'false' },
    },
  );
  // As api/main.ts runs it: signals what the ingress stored while Temporal could not take it.
  relay = startInboxRelay({ pool: e.pool, temporal: e.temporal, log: silent, intervalMs: 200 });
  await signInOperator();
}, 120_000);

afterAll(async () => {
  server?.process.kill('SIGCONT');
  await relay?.stop();
  await e?.close();
  await server?.stop();
}, 60_000);

interface Answer {
  status: number;
  ms: number;
  contentType: string;
  retryAfter: string | null;
  // biome-ignore lint/suspicious/noExplicitAny: parsed JSON asserted on field by field
  body: any;
}

/**
 * One request, timed; a hung one is cut at 30 s. To the API with its key (a /v1 path), the
 * ingress (a URL), or the back office as the signed-in operator (a /backoffice path, a form).
 */
async function timed(target: string, body?: unknown): Promise<Answer> {
  const page = target.startsWith('/backoffice');
  const started = performance.now();
  try {
    const res = await fetch(target.startsWith('/') ? `${e.url}${target}` : target, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        ...(page ? { cookie: operator.cookie } : { authorization: `Bearer ${API_KEY}` }),
        ...(body === undefined
          ? {}
          : { 'content-type': page ? 'application/x-www-form-urlencoded' : 'application/json' }),
      },
      body:
        body === undefined
          ? undefined
          : page
            ? new URLSearchParams({ _csrf: operator.token, ...(body as Record<string, string>) }).toString()
            : JSON.stringify(body),
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const contentType = res.headers.get('content-type') ?? '';
    return {
      status: res.status,
      ms: Math.round(performance.now() - started),
      contentType,
      retryAfter: res.headers.get('retry-after'),
      body: /json/.test(contentType) ? JSON.parse(text) : text,
    };
  } catch (err) {
    return {
      status: 0,
      ms: Math.round(performance.now() - started),
      contentType: '',
      retryAfter: null,
      body: String(err),
    };
  }
}

/** The back office's session cookie and form token of a reviewer signed in over HTTP. */
const operator = { cookie: '', token: '' };

async function signInOperator() {
  const email = 'frozen.reviewer@example.com';
  const password = 'frozen reviewer password';
  await saveOperator(e.pool, {
    email,
    name: 'Frozen',
    role: 'reviewer',
    passwordHash: await hashPassword(password),
  });
  const tokenIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
  const cookieOf = (res: Response) => res.headers.getSetCookie()[0]?.split(';')[0] ?? '';
  const form = await fetch(`${e.url}/backoffice/sign-in`);
  const signedIn = await fetch(`${e.url}/backoffice/sign-in`, {
    method: 'POST',
    headers: { cookie: cookieOf(form), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: tokenIn(await form.text()), email, password }).toString(),
    redirect: 'manual',
  });
  expect(signedIn.status).toBe(303);
  operator.cookie = cookieOf(signedIn);
  const home = await fetch(`${e.url}/backoffice`, { headers: { cookie: operator.cookie } });
  expect(home.status).toBe(200);
  operator.token = tokenIn(await home.text());
}

const depositBody = (txid: string) => ({
  txid,
  client: { externalId: `frozen-${++n}`, cpf: freshCpf(), email: 'ana@example.com', name: 'Ana Souza' },
  amountCentavos: 12_345,
});

/** 32 digits, unique to this run. */
const newTxid = () => `${Date.now()}${String(++n).padStart(6, '0')}`.padEnd(32, '7').slice(0, 32);

const expectUnavailable = (a: Answer, what: string) => {
  expect(a.status, `${what}: ${JSON.stringify(a)}`).toBe(503);
  expect(a.contentType).toMatch(/^application\/problem\+json/);
  expect(a.body.type).toBe(`${PROBLEM_BASE}unavailable`);
  expect(Number(a.retryAfter)).toBeGreaterThan(0);
};

describe('Temporal frozen under load', () => {
  it('answers every request within the deadline, 503 with Retry-After; afterwards the same requests get their QR, once', async () => {
    // Warm up: deposits created while the server answers.
    const warm = [];
    for (let i = 0; i < 3; i++) {
      const body = depositBody(newTxid());
      const a = await timed('/v1/deposits', body);
      expect(a.status, JSON.stringify(a.body)).toBe(201);
      warm.push({ body, answer: a });
    }
    const paid = warm[0]!.body.txid;
    // A case an operator opens and decides while frozen: its page answers now.
    const casePath = `/backoffice/flows/${encodeURIComponent(depositWorkflowId(warm[1]!.body.txid))}`;
    await eventually(
      () => timed(casePath),
      (a) => a.status === 200,
    );
    // The payer pays; the provider's notification of it comes below, while Temporal is frozen.
    await e.sandboxControl(`/sandbox/deposits/${paid}/pay`, {});

    // Some deposits on their way when the server stops: their start may reach it, their answer not.
    const bodies = new Map<string, ReturnType<typeof depositBody>>();
    const ask = (body: ReturnType<typeof depositBody>) => {
      bodies.set(body.txid, body);
      return timed('/v1/deposits', body).then((a) => ({ txid: body.txid, ...a }));
    };
    const onTheirWay = Array.from({ length: 3 }, () => ask(depositBody(newTxid())));
    await sleep(40);

    const pid = server.process.pid as number;
    const thaw = () => process.kill(pid, 'SIGCONT');
    process.kill(pid, 'SIGSTOP');
    const frozenAt = performance.now();
    const thawed = sleep(FREEZE_MS).then(thaw);
    let during: Awaited<ReturnType<typeof ask>>[];
    let state: Answer;
    let ready: Answer;
    let notification: Answer;
    let casePage: Answer;
    let decision: Answer;
    try {
      const trickle: Promise<Awaited<ReturnType<typeof ask>>>[] = [];
      const lastAskAt = FREEZE_MS - DEADLINE_MS - MARGIN_MS;
      const reads = (async () => {
        await sleep(1_000);
        state = await timed(`/v1/deposits/${warm[1]!.body.txid}`);
        ready = await timed('/readyz');
        notification = await timed(e.ingress, {
          id: paid,
          type: 'deposit',
          action: 'updated',
          partner_id: e.partnerId,
        });
        casePage = await timed(casePath);
        decision = await timed(`${casePath}/resolution`, { decision: 'accept', reason: 'paid in cash' });
      })();
      while (performance.now() - frozenAt < lastAskAt) {
        trickle.push(ask(depositBody(newTxid())));
        await sleep(TRICKLE_EVERY_MS);
      }
      during = await Promise.all(trickle);
      await reads;
      await thawed;
    } finally {
      thaw();
    }
    const first = await Promise.all(onTheirWay);
    process.stderr.write(
      `[frozen] during the freeze: deposits ${during.map((a) => `${a.status}/${a.ms}ms`).join(' ')}; ` +
        `state ${state!.status}/${state!.ms}ms; readyz ${ready!.status}/${ready!.ms}ms; ` +
        `ingress ${notification!.status}/${notification!.ms}ms; ` +
        `back office case ${casePage!.status}/${casePage!.ms}ms, decision ${decision!.status}/${decision!.ms}ms; on their way ${first.map((a) => `${a.status}/${a.ms}ms`).join(' ')}\n`,
    );

    // Frozen: every answer within the deadline, none hangs.
    expect(during.length).toBeGreaterThanOrEqual(15);
    for (const a of [...during, state!]) {
      expectUnavailable(a, 'while frozen');
      expect(a.ms).toBeLessThanOrEqual(DEADLINE_MS + MARGIN_MS);
    }
    // The back office: a page that says so, in time, for a case and for a decision alike.
    for (const a of [casePage!, decision!]) {
      expect(a.status, String(a.body).slice(0, 300)).toBe(503);
      expect(a.contentType).toMatch(/^text\/html/);
      expect(a.body).toContain(catalogs['pt-BR'].errors.unavailable);
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
      expect(a.ms).toBeLessThanOrEqual(DEADLINE_MS + MARGIN_MS);
    }
    expect(ready!.status).toBe(503);
    expect(ready!.ms).toBeLessThanOrEqual(DEADLINE_MS + MARGIN_MS);
    // The ingress stores and answers; the signal waits for Temporal, not the provider.
    expect(notification!.status).toBe(200);
    expect(notification!.ms).toBeLessThan(DEADLINE_MS);
    for (const a of first) {
      if (a.status !== 201) expectUnavailable(a, 'on its way at the freeze');
      expect(a.ms).toBeLessThanOrEqual(DEADLINE_MS + MARGIN_MS);
    }

    // Thawed: the same requests again each get their QR, from the one flow of their txid.
    const asked = [...first, ...during];
    const again = new Map<string, Answer>();
    for (const { txid } of asked) {
      // Temporal takes a moment to catch up on what queued while it was frozen.
      const a = await eventually(
        () => timed('/v1/deposits', bodies.get(txid)),
        (r) => r.status !== 503,
        { timeoutMs: 30_000, intervalMs: 500 },
      );
      expect([200, 201], `${txid}: ${JSON.stringify(a.body)}`).toContain(a.status);
      expect(a.body.payload).toMatch(/^000201/);
      again.set(txid, a);
    }
    for (const { body, answer } of warm) {
      const a = await timed('/v1/deposits', body);
      expect(a.status).toBe(200);
      expect(a.body.payload).toBe(answer.body.payload);
    }
    for (const { txid } of [...asked, ...warm.map((w) => w.body)]) {
      const runs = await e.temporal.workflow.count(`WorkflowId = '${depositWorkflowId(txid)}'`);
      expect(runs.count, `${txid}: runs`).toBe(1);
      const atProvider = e.sandbox.state.deposits.get(txid);
      expect(atProvider?.result.pixPayload, `${txid}: at the provider`).toBeDefined();
      const answered = again.get(txid);
      if (answered) expect(answered.body.payload).toBe(atProvider?.result.pixPayload);
    }
    const repeats = [...again.values()].filter((a) => a.status === 200).length;
    process.stderr.write(
      `[frozen] after the thaw: ${again.size - repeats} created, ${repeats} already started\n`,
    );

    // The notification taken while frozen reaches its flow once Temporal is back.
    await eventually(
      () => timed(`/v1/deposits/${paid}`),
      (s) => s.body.state?.status === 'completed',
      30_000,
    );
  }, 90_000);
});
