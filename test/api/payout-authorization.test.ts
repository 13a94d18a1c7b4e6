import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalResponseSchema } from '../../api/withdrawals-schemas';
import { PAYOUT_AUTHORIZATION_DEV_SECRET } from '../../common/config';
import type { WithdrawalInput } from '../../contracts/withdrawal';
import { payoutAuthorizationTestAmounts } from '../../sandbox/payout-authorization';
import { signedJsonRequest } from '../../signed-requests/client';
import { verifiedWithKnownPayee } from '../helpers/customers';
import { payoutAuthorizationRequest } from '../helpers/payout-authorization';
import { type ApiEnv, eventually, freshCpf, PII_KEY, startApiEnv } from './support';

// The operator's payout authorization on the real stack (API over HTTP, worker, Temporal dev
// server, Postgres), asked over signed HTTP of the sandbox's emulation, as `npm start` asks it
// with PAYOUT_AUTHORIZATION_URL pointed there (docs/sandbox.md).

const TIMEOUT_MS = 300;
const DENY = payoutAuthorizationTestAmounts.find((t) => t.centavos === 13)?.decision;
const DENY_REASON = DENY?.decision === 'deny' ? DENY.reason : '';

let e: ApiEnv;
let n = 0;

beforeAll(async () => {
  // Reconciliation every second: a settled withdrawal completes without a webhook.
  e = await startApiEnv(
    { pollScheduleMs: [1_000] },
    { payoutAuthorization: true, env: { PAYOUT_AUTHORIZATION_TIMEOUT_MS: String(TIMEOUT_MS) } },
  );
});
afterAll(async () => {
  await e?.close();
});

type Withdrawal = ReturnType<typeof withdrawalResponseSchema.parse>;

const transactionId = () => `sbx-auth-${Date.now()}-${++n}`;

/** A withdrawal of a verified person to a payee paid before: only the authorization stands in its way. */
const withdraw = async (
  over: { transactionId?: string; amountCentavos?: number } = {},
): Promise<Withdrawal> => {
  const body = {
    transactionId: transactionId(),
    client: { externalId: `user-${n}`, cpf: freshCpf(), email: 'ana@example.com', name: 'Ana Souza' },
    pixKey: 'ana@example.com',
    pixType: 'EMAIL',
    amountCentavos: 10_000,
    ...over,
  };
  await verifiedWithKnownPayee(e.pool, PII_KEY, { ...body, merchant: 'sandbox-merchant' } as WithdrawalInput);
  const res = await e.call('POST', '/v1/withdrawals', { body });
  expect(res.status).toBe(202);
  return withdrawalResponseSchema.parse(await res.json());
};

const stateOf = async (id: string) =>
  withdrawalResponseSchema.parse(await (await e.call('GET', `/v1/withdrawals/${id}`)).json()).state;
const settled = (id: string, done: (status: string) => boolean) =>
  eventually(
    () => stateOf(id),
    (s) => done(s.status),
  );

const payoutsSent = async (id: string): Promise<number> => {
  const state = (await (await fetch(`${e.sandbox.url}/sandbox/state`)).json()) as {
    counters: { payouts: Record<string, number> };
  };
  return state.counters.payouts[id] ?? 0;
};
const emulation = async () =>
  (await (await fetch(`${e.sandbox.url}/sandbox/payout-authorization`)).json()) as {
    asked: Record<string, number>;
    refused: number;
    held: number;
  };
const rowOf = async (w: Withdrawal) =>
  (await e.pool.query('SELECT status, reason, details FROM flows WHERE workflow_id = $1', [w.workflowId]))
    .rows[0] as { status: string; reason: string | null; details: Record<string, unknown> };

describe("the sandbox's payout authorization, asked by the worker", () => {
  it('approves an ordinary payout: asked once, sent once, completed', async () => {
    const w = await withdraw();
    const id = w.state.transactionId;
    expect(w.state.status).toMatch(/^(awaiting_authorization|sending|processing)$/);
    await settled(id, (s) => s === 'processing');
    expect((await emulation()).asked[id]).toBe(1);
    await e.sandboxControl(`/sandbox/withdrawals/${id}/settle`);
    const state = await settled(id, (s) => s === 'completed');
    expect(state.authorization).toEqual({ decision: 'approve' });
    expect(await payoutsSent(id)).toBe(1);
  });

  it('denies the test amount ending in ,13: refused authorization_denied with its reason, nothing sent', async () => {
    expect(DENY_REASON).not.toBe('');
    const w = await withdraw({ amountCentavos: 12_313 });
    const id = w.state.transactionId;
    const state = await settled(id, (s) => s === 'refused');
    expect(state).toMatchObject({
      reason: 'authorization_denied',
      authorization: { decision: 'deny', reason: DENY_REASON },
    });
    expect(await payoutsSent(id)).toBe(0);
    await eventually(
      () => rowOf(w),
      (row) => row?.status === 'refused',
    );
    expect(await rowOf(w)).toMatchObject({
      reason: 'authorization_denied',
      details: { authorization: { decision: 'deny', reason: DENY_REASON } },
    });
  });

  it("denies one payout through the sandbox's control, and only that one", async () => {
    const denied = transactionId();
    await e.sandboxControl('/sandbox/payout-authorization/decision', {
      transactionId: denied,
      decision: 'deny',
      reason: 'daily payout limit reached',
    });
    const w = await withdraw({ transactionId: denied });
    const other = await withdraw();
    expect(await settled(denied, (s) => s === 'refused')).toMatchObject({
      reason: 'authorization_denied',
      authorization: { decision: 'deny', reason: 'daily payout limit reached' },
    });
    expect(await payoutsSent(w.state.transactionId)).toBe(0);
    await settled(other.state.transactionId, (s) => s === 'processing');
    expect(await payoutsSent(other.state.transactionId)).toBe(1);
  });

  it('never answers the test amount ending in ,29: three attempts, then refused authorization_unavailable', async () => {
    const w = await withdraw({ amountCentavos: 12_329 });
    const id = w.state.transactionId;
    const state = await settled(id, (s) => s === 'refused');
    expect(state).toMatchObject({
      reason: 'authorization_unavailable',
      authorization: {
        decision: 'no_answer',
        reason: expect.stringMatching(new RegExp(`no answer within ${TIMEOUT_MS} ms \\(attempt 3 of 3\\)`)),
      },
    });
    expect(await payoutsSent(id)).toBe(0);
    expect((await emulation()).asked[id]).toBe(3);
    // The worker gave up on each: none is held open.
    await eventually(emulation, (s) => s.held === 0);
  });

  it('refuses a badly signed request (401) and takes it for nothing', async () => {
    const question = payoutAuthorizationRequest({
      transactionId: transactionId(),
      amountCentavos: 10_000,
      payee: { keyType: 'EMAIL', keyMasked: 'a***@example.com' },
    });
    const body = JSON.stringify(question);
    const other = `whsec_${Buffer.from('not-the-payout-authorization-secret').toString('base64')}`;
    const before = await emulation();
    const post = (headers: Record<string, string>) =>
      fetch(`${e.sandbox.url}/operator/payout-authorization`, { method: 'POST', headers, body });
    const badlySigned = await post(signedJsonRequest(body, other, { idPrefix: 'x', userAgent: 'x' }));
    expect(badlySigned.status).toBe(401);
    expect(await post({ 'content-type': 'application/json' }).then((r) => r.status)).toBe(401);
    const after = await emulation();
    expect(after.refused - before.refused).toBe(2);
    expect(after.asked[question.transactionId]).toBeUndefined();
    // Signed with the secret the worker signs with, the same question is answered.
    const signed = await post(
      signedJsonRequest(body, PAYOUT_AUTHORIZATION_DEV_SECRET, { idPrefix: 'x', userAgent: 'x' }),
    );
    expect(signed.status).toBe(200);
    expect(await signed.json()).toEqual({ decision: 'approve' });
  });
});
