import { randomBytes, randomInt } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser';
import { onboard, ownCpfKey, type Person } from '../helpers/people';
import {
  API_KEY,
  call,
  DEPOSIT_EXPIRY_MS,
  eventually,
  freshCpf,
  type Json,
  peopleAt,
  type Reply,
  type Stack,
  startStack,
  WEBHOOK_PARTNER_ID,
  WEBHOOK_SECRET,
} from './stack';

// Every flow end to end (onboarding, deposit, withdrawal, the webhook ingress) and the sandbox
// console, against the whole stack as `npm start` runs it (every part a real process), driven
// only over HTTP: the API, the sandbox's /sandbox/* control endpoints and the webhook ingress.

let stack: Stack;
/** Onboarded (approved) first: every deposit and payout of this file is hers. */
let ana: Person;
/** Every answer of the API and the ingress with a 5xx, for the last test. */
const serverErrors: string[] = [];

const track = <T>(what: string, r: Reply<T>): Reply<T> => {
  if (r.status >= 500) serverErrors.push(`${what} -> ${r.status} ${r.bytes.toString('utf8').slice(0, 300)}`);
  return r;
};
const api = async <T = Json>(path: string, init: { method?: string; body?: unknown; raw?: string } = {}) =>
  track(
    `${init.method ?? (init.body === undefined ? 'GET' : 'POST')} ${path}`,
    await call<T>(`${stack.api}${path}`, { ...init, headers: { authorization: `Bearer ${API_KEY}` } }),
  );
const sandbox = (path: string, body: unknown = {}) => call(`${stack.sandbox}${path}`, { body });
const ingress = async (suffix: string, init: { body?: unknown; raw?: string; url?: string }) =>
  track(
    `ingress ${suffix}`,
    await call(`${init.url ?? stack.ingress}${suffix}`, { ...init, method: 'POST' }),
  );

const txid = () => `${Date.now()}${randomInt(1e6)}`;
const person = (cpf: string, name = 'Ana Souza') => ({
  externalId: `ext-${randomBytes(4).toString('hex')}`,
  cpf,
  email: 'ana@example.com',
  name,
});
const PNG_MAGIC = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

async function createDeposit(amountCentavos = 15_000, id = txid()) {
  const r = await api('/v1/deposits', { body: { txid: id, amountCentavos, client: ana } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { txid: id, qr: r.body };
}

const depositState = async (id: string) => {
  const r = await api(`/v1/deposits/${id}`);
  expect(r.status).toBe(200);
  return r.body.state;
};
const waitDeposit = (id: string, status: string, timeoutMs = 20_000) =>
  eventually(async () => {
    const s = await depositState(id);
    expect(s.status).toBe(status);
    return s;
  }, timeoutMs);

const onboardingState = async (cpf: string) => {
  const r = await api(`/v1/onboardings/${cpf}`);
  expect(r.status).toBe(200);
  return r.body.state;
};
const waitOnboarding = (cpf: string, status: string, timeoutMs = 20_000) =>
  eventually(async () => {
    const s = await onboardingState(cpf);
    expect(s.status).toBe(status);
    return s;
  }, timeoutMs);

async function startOnboarding(cpf: string) {
  const r = await api('/v1/onboardings', { body: { cpf, plan: 'plan_basic', event: 'onboarding' } });
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  // The workflow id carries a keyed hash of the CPF, never the CPF itself.
  expect(r.body.workflowId).toMatch(/^onboarding-[0-9a-f]{16,}$/);
  expect(r.body.workflowId).not.toContain(cpf);
}

/**
 * The person finishes the liveness process in the sandbox; its callback goes to the ingress. The
 * link lives LIVENESS_TTL_MS (4 s) here, which a busy machine can outlast between the state read
 * and this call: then, as a person would, they ask for a link again (a renewed one) and finish it.
 */
async function completeLiveness(cpf: string) {
  for (let attempt = 1; ; attempt++) {
    const r = await sandbox('/sandbox/liveness/complete', { document: cpf });
    if (r.status === 200) return;
    const expired = r.status === 409 && /expired/.test(JSON.stringify(r.body));
    if (!expired || attempt === 3) expect(r.status, JSON.stringify(r.body)).toBe(200);
    const renewed = await api(`/v1/onboardings/${cpf}/liveness-link`, { method: 'POST' });
    expect(renewed.status, JSON.stringify(renewed.body)).toBe(200);
  }
}

/** A payout to Ana's own CPF key. */
const withdrawalBody = (transactionId: string, amountCentavos: number) => ({
  transactionId,
  amountCentavos,
  ...ownCpfKey(ana),
  client: ana,
});

let expiring: string;

// The stack's whole output, where `output()` keeps only its tail.
const logFile = path.join(os.tmpdir(), `pixflow-e2e-${process.pid}.log`);

beforeAll(async () => {
  stack = await startStack(150_000, logFile);
  ana = await onboard(peopleAt(stack));
  // Created first: it expires (never paid) while the other tests run.
  expiring = (await createDeposit(777)).txid;
}, 180_000);

afterAll(async () => {
  if (!stack) return;
  const code = await stack.stop();
  expect(code, stack.output().slice(-5000)).toBe(0);
  const tail = stack.output().slice(-2000);
  const logged = await eventually(async () => {
    const text = readFileSync(logFile, 'utf8');
    if (!text.endsWith(tail)) throw new Error('the log file has not caught up with the output');
    return text;
  });
  expect(logged).toContain('pixflow is up');
  rmSync(logFile, { force: true });
}, 60_000);

describe('the API refuses what it should, and starts nothing', () => {
  const problem = (r: Reply, status: number) => {
    expect(r.status, JSON.stringify(r.body)).toBe(status);
    expect(r.contentType).toMatch(/^application\/problem\+json/);
    expect(r.body).toMatchObject({ status, title: expect.any(String), type: expect.any(String) });
  };
  const noFlowFor = async (cpf: string) => {
    expect((await api(`/v1/onboardings/${cpf}`)).status).toBe(404);
    const flows = await api(`/v1/flows?cpf=${cpf}`);
    expect(flows.status).toBe(200);
    expect(flows.body.items).toEqual([]);
  };

  it('missing and wrong API keys: 401 problem+json, no flow started', async () => {
    const cpf = freshCpf();
    const body = { cpf, plan: 'plan_basic', event: 'onboarding' };
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong-key' },
      { authorization: `Bearer ${API_KEY}x` },
      { authorization: API_KEY }, // no scheme
      { authorization: `Basic ${Buffer.from(`user:${API_KEY}`).toString('base64')}` },
    ]) {
      const r = track('unauthenticated', await call(`${stack.api}/v1/onboardings`, { body, headers }));
      problem(r, 401);
      const d = track(
        'unauthenticated',
        await call(`${stack.api}/v1/deposits`, {
          body: { txid: txid(), amountCentavos: 100, client: person(cpf) },
          headers,
        }),
      );
      problem(d, 401);
      problem(track('unauthenticated', await call(`${stack.api}/v1/flows`, { headers })), 401);
    }
    await noFlowFor(cpf);
  });

  it('invalid bodies: 400 problem+json naming the field, no flow started', async () => {
    const cpf = freshCpf();
    const badCpf = `${cpf.slice(0, 10)}${(Number(cpf[10]) + 1) % 10}`; // wrong check digit
    const ob = await api('/v1/onboardings', { body: { cpf, plan: 'plan_gold', event: 'onboarding' } });
    problem(ob, 400);
    expect(ob.body.invalid_params.map((p: { name: string }) => p.name)).toContain('body.plan');
    const obCpf = await api('/v1/onboardings', {
      body: { cpf: badCpf, plan: 'plan_basic', event: 'onboarding' },
    });
    problem(obCpf, 400);
    expect(JSON.stringify(obCpf.body.invalid_params)).toContain('body.cpf');
    problem(await api('/v1/onboardings', { raw: '{"cpf": ', method: 'POST' }), 400);
    await noFlowFor(cpf);

    const id = txid();
    const dep = await api('/v1/deposits', { body: { txid: id, amountCentavos: 1.5, client: person(cpf) } });
    problem(dep, 400);
    expect(dep.body.invalid_params.map((p: { name: string }) => p.name)).toContain('body.amountCentavos');
    const depEmail = await api('/v1/deposits', {
      body: { txid: id, amountCentavos: 100, client: { ...person(cpf), email: 'not-an-email' } },
    });
    problem(depEmail, 400);
    expect(depEmail.body.invalid_params.map((p: { name: string }) => p.name)).toContain('body.client.email');
    problem(await api(`/v1/deposits/${id}`), 404);

    const wid = `wd-${randomBytes(6).toString('hex')}`;
    const wd = await api('/v1/withdrawals', {
      body: { ...withdrawalBody(wid, 500), pixKey: 'not-an-email', pixType: 'EMAIL' },
    });
    problem(wd, 400);
    expect(wd.body.invalid_params.map((p: { name: string }) => p.name)).toContain('body.pixKey');
    problem(await api(`/v1/withdrawals/${wid}`), 404);

    problem(await api('/v1/onboardings/123'), 400);
    problem(await api(`/v1/onboardings/${cpf}/review`, { body: { decision: 'maybe' } }), 400);
    const flows = await api('/v1/flows?type=deposit&limit=100');
    expect(flows.body.items.map((f: { businessId: string }) => f.businessId)).not.toContain(id);
  });
});

describe('onboarding', () => {
  it('approved: KYC regular, liveness completed through the sandbox callback', async () => {
    const cpf = '73628883504';
    await startOnboarding(cpf);
    const waiting = await waitOnboarding(cpf, 'awaiting_liveness');
    expect(waiting.link.url).toMatch(/^http/);
    await completeLiveness(cpf);
    const s = await waitOnboarding(cpf, 'approved');
    expect(s.livenessStatus).toBe('completed');
    expect(s.reasons).toEqual([]);
  });

  it('rejected by KYC (suspenso)', async () => {
    const cpf = '30281362874';
    await startOnboarding(cpf);
    const s = await waitOnboarding(cpf, 'rejected');
    expect(s.reasons).toContain('kyc_status_suspenso');
    expect(s.link).toBeUndefined();
  });

  it('rejected by liveness (document validation failed)', async () => {
    const cpf = '25448320376';
    await startOnboarding(cpf);
    await waitOnboarding(cpf, 'awaiting_liveness');
    await completeLiveness(cpf);
    const s = await waitOnboarding(cpf, 'rejected');
    expect(s.livenessStatus).toBe('failed');
    expect(s.reasons).toContain('liveness_failed');
  });

  it('manual review approved by an operator', async () => {
    const cpf = freshCpf();
    await startOnboarding(cpf);
    await waitOnboarding(cpf, 'awaiting_liveness');
    // Not awaiting review yet: the operator's decision is refused.
    const early = await api(`/v1/onboardings/${cpf}/review`, {
      body: { decision: 'approve', by: 'ops@example.com', reason: 'too early' },
    });
    expect(early.status).toBe(409);
    await completeLiveness(cpf);
    await waitOnboarding(cpf, 'awaiting_review');
    const r = await api(`/v1/onboardings/${cpf}/review`, {
      body: { decision: 'approve', by: 'ops@example.com', reason: 'documents checked by hand' },
    });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    const s = await waitOnboarding(cpf, 'approved');
    expect(s.review).toEqual({
      decision: 'approve',
      by: 'ops@example.com',
      reason: 'documents checked by hand',
    });
    expect(s.reasons).toContain('review_approved');
    // The operators' table follows (written by an activity after the state changed).
    await eventually(async () => {
      const flows = await api(`/v1/flows?cpf=${cpf}`);
      expect(flows.body.items).toMatchObject([{ type: 'onboarding', status: 'approved' }]);
    });
  });

  it('callbacks that arrive out of order never show an earlier liveness status than the outcome', async () => {
    // The provider posts `processing` then the outcome; the network may deliver them the other
    // way round (the sandbox's reorder knob: newest first). The state must keep the outcome.
    const cpfs = [freshCpf(), freshCpf(), freshCpf(), freshCpf(), freshCpf()];
    await Promise.all(cpfs.map((cpf) => startOnboarding(cpf)));
    await Promise.all(cpfs.map((cpf) => waitOnboarding(cpf, 'awaiting_liveness')));
    expect((await sandbox('/sandbox/faults', { notifications: { reorderWindow: 2 } })).status).toBe(200);
    try {
      for (const cpf of cpfs) await completeLiveness(cpf); // each: processing, manual_approve_pending
      for (const cpf of cpfs) {
        const s = await waitOnboarding(cpf, 'awaiting_review');
        expect(s.livenessStatus, cpf).toBe('manual_approve_pending');
      }
    } finally {
      await call(`${stack.sandbox}/sandbox/faults`, { method: 'DELETE' });
    }
  });

  it('the liveness link is reused while valid, then renewed after the short TTL', async () => {
    const cpf = freshCpf();
    await startOnboarding(cpf);
    const first = (await waitOnboarding(cpf, 'awaiting_liveness')).link;
    const [a, b] = await Promise.all([
      api(`/v1/onboardings/${cpf}/liveness-link`, { method: 'POST' }),
      api(`/v1/onboardings/${cpf}/liveness-link`, { method: 'POST' }),
    ]);
    for (const r of [a, b]) {
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      expect(r.body).toMatchObject({ url: first.url, issuedAt: first.issuedAt });
    }
    // The flow issued the link itself: only the ask answered second was given it before.
    expect([a.body.reused, b.body.reused].sort()).toEqual([false, true]);
    // The time passing is what is under test: wait until the link's own expiry (plus a margin,
    // so the sandbox's session of the same lifetime has ended too).
    const wait = new Date(first.expiresAt).getTime() + 500 - Date.now();
    await new Promise((r) => setTimeout(r, Math.max(0, wait)));
    const renewed = await api(`/v1/onboardings/${cpf}/liveness-link`, { method: 'POST' });
    expect(renewed.status).toBe(200);
    expect(renewed.body.reused).toBe(false);
    expect(renewed.body.url).not.toBe(first.url);
    expect(Date.parse(renewed.body.issuedAt)).toBeGreaterThan(Date.parse(first.issuedAt));
    const again = await api(`/v1/onboardings/${cpf}/liveness-link`, { method: 'POST' });
    expect(again.body).toMatchObject({ reused: true, url: renewed.body.url });
    expect((await onboardingState(cpf)).link.url).toBe(renewed.body.url);
  });
});

/** What the sandbox sent about one deposit: each notification's action and how it went. */
async function notificationsSentFor(id: string): Promise<[string, string][]> {
  const log = (await call(`${stack.sandbox}/sandbox/state`)).body.notifications as {
    message: { id: string; action: string };
    status: string;
  }[];
  return log.filter((n) => n.message.id === id).map((n) => [n.message.action, n.status]);
}

describe('deposits', () => {
  it('created with its QR, paid in the sandbox, completed through the webhook', async () => {
    const { txid: id, qr } = await createDeposit(15_000);
    expect(qr).toMatchObject({ txid: id, amountCentavos: 15_000, workflowId: `deposit-${id}` });
    expect(qr.payload).toMatch(/^000201/); // BR Code
    expect(qr.image).toMatch(/^data:image\/png;base64,/);
    expect(Buffer.from(qr.image.split(',')[1], 'base64').subarray(0, 8)).toEqual(PNG_MAGIC);
    const png = await api(`/v1/deposits/${id}/qrcode.png`);
    expect(png.contentType).toBe('image/png');
    expect(png.bytes.subarray(0, 8)).toEqual(PNG_MAGIC);
    // The same request again: the same QR, no second flow.
    expect((await depositState(id)).status).toBe('awaiting_payment');

    // The provider's `requested` notification reaches the ingress, which keeps it without waking
    // the flow: it announces the flow's own request.
    await eventually(async () =>
      expect(await notificationsSentFor(id)).toEqual([['requested', 'delivered']]),
    );
    expect((await depositState(id)).notifications).toBe(0);
    const paid = await sandbox(`/sandbox/deposits/${id}/pay`, { payerName: 'Ana Souza' });
    expect(paid.status).toBe(200);
    const s = await waitDeposit(id, 'completed');
    expect(s.payment).toMatchObject({ e2eId: expect.any(String), payerName: 'Ana Souza' });
    // The payment's `updated` woke it (the reconciliation sweep, every 2 s here, may have found
    // the payment first and hinted as well).
    expect([1, 2]).toContain(s.notifications);
    expect(await notificationsSentFor(id)).toEqual([
      ['requested', 'delivered'],
      ['updated', 'delivered'],
    ]);
  });

  it('with every webhook dropped, completed by reconciliation', async () => {
    // Nothing else sends notifications meanwhile: the tests of this file run one at a time.
    expect((await sandbox('/sandbox/faults', { notifications: { dropNext: 2 } })).status).toBe(200);
    try {
      const { txid: id } = await createDeposit(2_500);
      expect((await sandbox(`/sandbox/deposits/${id}/pay`)).status).toBe(200);
      const s = await waitDeposit(id, 'completed');
      // The one hint it got is reconciliation's, which found it paid; the flow proved it itself.
      expect(s.notifications).toBe(1);
      expect(s.inquiries).toBe(1);
      const log = (await call(`${stack.sandbox}/sandbox/state`)).body.notifications as {
        message: { id: string };
        status: string;
      }[];
      expect(log.filter((n) => n.message.id === id).map((n) => n.status)).toEqual(['dropped', 'dropped']);
    } finally {
      await call(`${stack.sandbox}/sandbox/faults`, { method: 'DELETE' });
    }
  });
});

describe('withdrawals', () => {
  const waitWithdrawal = (id: string, status: string) =>
    eventually(async () => {
      const r = await api(`/v1/withdrawals/${id}`);
      expect(r.status).toBe(200);
      expect(r.body.state.status).toBe(status);
      return r.body.state;
    }, 20_000);

  it('completed, with its receipt PNG served by the API', async () => {
    const id = `wd-${randomBytes(6).toString('hex')}`;
    const body = withdrawalBody(id, 4_990);
    const r = await api('/v1/withdrawals', { body });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    await waitWithdrawal(id, 'processing');
    expect((await api(`/v1/withdrawals/${id}/receipt.png`)).status).toBe(404);
    // Idempotent: the same request again is the same flow; another body is a conflict.
    expect((await api('/v1/withdrawals', { body })).status).toBe(202);
    expect((await api('/v1/withdrawals', { body: { ...body, amountCentavos: 4_991 } })).status).toBe(409);

    expect((await sandbox(`/sandbox/withdrawals/${id}/settle`)).status).toBe(200);
    const s = await waitWithdrawal(id, 'completed');
    expect(s.receiptStored).toBe(true);
    expect(s.e2eId).toEqual(expect.any(String));
    const receipt = await api(`/v1/withdrawals/${id}/receipt.png`);
    expect(receipt.status).toBe(200);
    expect(receipt.contentType).toBe('image/png');
    expect(receipt.bytes.subarray(0, 8)).toEqual(PNG_MAGIC);
    expect(receipt.bytes.length).toBeGreaterThan(100);
    // Sent exactly once.
    const sbx = (await call(`${stack.sandbox}/sandbox/state`)).body;
    expect(sbx.counters.payouts[id]).toBe(1);
  });

  it('failed, with the provider reason', async () => {
    const id = `wd-${randomBytes(6).toString('hex')}`;
    expect((await api('/v1/withdrawals', { body: withdrawalBody(id, 10) })).status).toBe(202);
    await waitWithdrawal(id, 'processing');
    const reason = 'e2e: beneficiary account closed';
    expect((await sandbox(`/sandbox/withdrawals/${id}/fail`, { reason })).status).toBe(200);
    const s = await waitWithdrawal(id, 'failed');
    expect(s.reason).toContain(reason);
    // Failed: no receipt will ever come, and the answer says so.
    expect((await api(`/v1/withdrawals/${id}/receipt.png`)).status).toBe(410);
  });
});

describe('webhook ingress', () => {
  const updated = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    type: 'deposit',
    action: 'updated',
    partner_id: WEBHOOK_PARTNER_ID,
    ...extra,
  });

  it('refuses bad secrets, partners, bodies and ids; a storm of copies is one or two signals', async () => {
    const { txid: id } = await createDeposit(990);
    const cpf = freshCpf();
    await startOnboarding(cpf);
    await waitOnboarding(cpf, 'awaiting_liveness');
    const forgedApproval = (partner_id: string) => ({
      transaction_id: 'forged',
      correlation_id: 'forged',
      document: cpf,
      status_verification: 'completed',
      status_onboarding: 'approved',
      action_type: 'onboarding',
      event: 'onboarding',
      datetime: new Date().toISOString(),
      partner_id,
    });
    // The provider's own `requested` notification arrived (kept, not signalled).
    await eventually(async () =>
      expect(await notificationsSentFor(id)).toEqual([['requested', 'delivered']]),
    );

    const base = `${stack.api}/webhooks/provider`;
    const refused: [string, Reply, number][] = [
      [
        'bad secret',
        await ingress('/deposit', { url: `${base}/not-the-secret-at-all`, body: updated(id) }),
        401,
      ],
      [
        'secret prefix',
        await ingress('/deposit', { url: `${base}/${WEBHOOK_SECRET.slice(0, -1)}`, body: updated(id) }),
        401,
      ],
      ['empty secret', await ingress('', { url: `${base}/`, body: updated(id) }), 404],
      ['bad partner', await ingress('/deposit', { body: updated(id, { partner_id: 'someone-else' }) }), 401],
      [
        'forged liveness, bad secret',
        await ingress('/liveness', {
          url: `${base}/not-the-secret-at-all`,
          body: forgedApproval(WEBHOOK_PARTNER_ID),
        }),
        401,
      ],
      [
        'forged liveness, bad partner',
        await ingress('/liveness', { body: forgedApproval('someone-else') }),
        401,
      ],
      ['no partner', await ingress('/deposit', { body: { id, type: 'deposit', action: 'updated' } }), 401],
      ['malformed json', await ingress('/deposit', { raw: '{"id": "1", ' }), 400],
      ['array body', await ingress('', { body: [updated(id)] }), 400],
      ['unknown type', await ingress('', { body: updated(id, { type: 'refund' }) }), 400],
      ['unknown action', await ingress('/deposit', { body: updated(id, { action: 'deleted' }) }), 400],
      ['unknown point', await ingress('/refund', { body: updated(id) }), 404],
      ['point mismatch', await ingress('/withdraw', { body: updated(id) }), 400],
      ['id not a txid', await ingress('/deposit', { body: updated('abc-not-digits') }), 400],
      [
        'liveness without a CPF',
        await ingress('/liveness', {
          body: {
            transaction_id: 't',
            correlation_id: 'c',
            document: 'nope',
            status_verification: 'completed',
            status_onboarding: 'approved',
            action_type: 'onboarding',
            event: 'onboarding',
            datetime: new Date().toISOString(),
            partner_id: WEBHOOK_PARTNER_ID,
          },
        }),
        400,
      ],
      ['oversized', await ingress('/deposit', { body: updated(id, { pad: 'x'.repeat(40_000) }) }), 413],
    ];
    for (const [what, r, status] of refused) {
      expect(r.status, `${what}: ${r.bytes.toString('utf8')}`).toBe(status);
      expect(r.contentType, what).toMatch(/^application\/problem\+json/);
      expect(r.bytes.toString('utf8'), what).not.toContain(WEBHOOK_SECRET);
    }

    // 30 concurrent copies of one notification: all accepted, one signal at once and at most one
    // more when the coalescing window ends.
    const storm = await Promise.all(
      Array.from({ length: 30 }, () => ingress('/deposit', { body: updated(id) })),
    );
    expect(storm.map((r) => r.status)).toEqual(Array(30).fill(200));
    const own = storm.filter((r) => (r.body as { duplicate: boolean }).duplicate === false).length;
    expect(own).toBeGreaterThanOrEqual(1);
    expect(own).toBeLessThanOrEqual(2);
    await eventually(async () => expect((await depositState(id)).notifications).toBe(own));
    // Absence cannot be polled: give the relay a few of its 1 s rounds to signal anything extra.
    await new Promise((r) => setTimeout(r, 2_500));
    const after = await depositState(id);
    expect(after.notifications).toBe(own);
    expect(after.status).toBe('awaiting_payment'); // a notification only wakes the flow
    // The forged approvals moved nothing.
    const onboarding = await onboardingState(cpf);
    expect(onboarding.status).toBe('awaiting_liveness');
    expect(onboarding.livenessStatus).toBeUndefined();

    // The provider's `updated` after payment has the same body as the storm's copies, and still
    // wakes the flow: the inquiry, not the notification, is the proof.
    expect((await sandbox(`/sandbox/deposits/${id}/pay`)).status).toBe(200);
    // The reconciliation sweep (every 2 s here) may find the payment first and hint as well.
    expect([1 + own, 2 + own]).toContain((await waitDeposit(id, 'completed')).notifications);
  });

  it('a notification for a flow that does not exist yet is kept and delivered when it appears', async () => {
    const id = txid();
    const early = await ingress('/deposit', { body: updated(id) });
    expect(early.status).toBe(200);
    expect(early.body).toMatchObject({ received: true, duplicate: false });
    await createDeposit(1_234, id);
    // The early `updated`, by the relay (the provider's `requested` is kept, not signalled).
    await eventually(async () => expect((await depositState(id)).notifications).toBe(1), 20_000);
    expect((await sandbox(`/sandbox/deposits/${id}/pay`)).status).toBe(200);
    await waitDeposit(id, 'completed');
  });
});

describe('the sandbox console in a real Chromium', () => {
  let browser: Browser | undefined;
  afterAll(async () => {
    await browser?.close();
  });

  it('a deposit created through the API shows its QR; Pay makes the API report it completed', async () => {
    browser = await launchChromium();
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    const pageErrors: string[] = [];
    page.on('pageerror', (err) => pageErrors.push(err.message));
    const { txid: id } = await createDeposit(15_000);

    await page.goto(`${stack.sandbox}/sandbox/console`);
    const row = page.locator(`[data-testid="deposit-${id}"]`);
    await row.waitFor({ timeout: 10_000 });
    await expect(row.locator(`[data-testid="value-${id}"]`).textContent()).resolves.toBe('R$ 150,00');
    const qr = page.locator(`[data-testid="qr-${id}"]`);
    type Img = { complete: boolean; naturalWidth: number };
    await page.waitForFunction(
      (el) => (el as unknown as Img).complete && (el as unknown as Img).naturalWidth > 0,
      await qr.elementHandle(),
    );
    expect(await qr.evaluate((el) => (el as unknown as Img).naturalWidth)).toBeGreaterThan(0);

    await page.locator(`[data-testid="pay-${id}"]`).click();
    await row.waitFor({ state: 'detached' });
    const s = await waitDeposit(id, 'completed');
    expect(s.payment.e2eId).toEqual(expect.any(String));
    expect(pageErrors).toEqual([]);
  });
});

describe('deposit expiry, and the whole run', () => {
  it(
    'a deposit never paid ends expired',
    async () => {
      const s = await waitDeposit(expiring, 'expired', DEPOSIT_EXPIRY_MS + 20_000);
      expect(s.payment).toBeUndefined();
      expect(Date.parse(s.finishedAt)).toBeGreaterThanOrEqual(Date.parse(s.qr.expiresAt));
      // The provider agrees, and paying now is refused.
      expect((await sandbox(`/sandbox/deposits/${expiring}/pay`)).status).toBe(409);
    },
    DEPOSIT_EXPIRY_MS + 30_000,
  );

  it('no 5xx from the API or the ingress anywhere in this run', () => {
    expect(serverErrors).toEqual([]);
  });
});
