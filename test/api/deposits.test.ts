import { PNG } from 'pngjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositResolutionResponseSchema, depositStateResponseSchema } from '../../api/deposits-schemas';
import { loadConfig } from '../../common/config';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import {
  AmountKey,
  CpfHashKey,
  CpfMaskedKey,
  FlowStatusKey,
  FlowTypeKey,
  MerchantKey,
} from '../../common/search-attributes';
import { depositStateQuery, depositWorkflowId } from '../../contracts/deposit';
import { suspendVerification } from '../../db/customers';
import { historyBytes } from '../helpers/histories';
import { onboard } from '../helpers/people';
import { expectActivityFailure } from '../helpers/sdk-log';
import {
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  json,
  PII_KEY,
  PNG_SIGNATURE,
  peopleAt,
  startApiEnv,
} from './support';

let e: ApiEnv;
let n = 0;
/** A person whose onboarding is approved: the one who deposits, unless a test needs another. */
let ana: string;
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});

const onboardingStatus = async (cpf: string) =>
  (await json(await e.call('GET', `/v1/onboardings/${cpf}`))).state.status;

/** A fresh person onboarded as a person is: KYC, the liveness, then the operator's approval. */
const approvedPerson = async (): Promise<string> => (await onboard(await peopleAt(e))).cpf;

beforeAll(async () => {
  // Reconciliation every second: a paid deposit completes without a webhook.
  e = await startApiEnv({ pollScheduleMs: [1_000] });
  // The sandbox's callbacks and notifications come in through the API's own ingress.
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  ana = await approvedPerson();
});
afterAll(async () => {
  await e?.close();
});

const depositBody = (over: Record<string, unknown> = {}, cpf = ana) => ({
  client: { externalId: `user-${++n}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
  amountCentavos: 15_000,
  ...over,
});

describe('deposits', () => {
  it('answers the QR in one call (201), the same QR again (200), and its PNG', async () => {
    const body = depositBody();
    const res = await e.call('POST', '/v1/deposits', { body });
    expect(res.status).toBe(201);
    const qr = (await res.json()) as Record<string, string | number>;
    expect(qr.txid).toMatch(/^\d{32}$/);
    expect(qr.amountCentavos).toBe(15_000);
    expect(qr.payload).toMatch(/^000201/);
    expect(qr.image).toMatch(/^data:image\/png;base64,/);
    expect(qr.workflowId).toBe(depositWorkflowId(String(qr.txid)));
    expect(res.headers.get('location')).toBe(`/v1/deposits/${qr.txid}`);

    // Operators can find it in the Temporal UI by type, CPF hash (never the CPF), amount, merchant;
    // its status is its row's: the search attribute shows only statuses an operator filters for.
    const sa = (await e.temporal.workflow.getHandle(String(qr.workflowId)).describe()).typedSearchAttributes;
    expect(sa.get(FlowTypeKey)).toBe('deposit');
    expect(sa.get(FlowStatusKey)).toBeUndefined();
    expect(sa.get(CpfHashKey)).toBe(cpfHash(body.client.cpf, PII_KEY));
    expect(sa.get(CpfMaskedKey)).toBe(maskCpf(body.client.cpf));
    expect(sa.get(AmountKey)).toBe(15_000);
    expect(sa.get(MerchantKey)).toBe('sandbox-merchant');

    const again = await e.call('POST', '/v1/deposits', { body: { ...body, txid: qr.txid } });
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(qr);

    // A state read carries the QR's payload and a link to its PNG, not the image itself.
    const state = await e.call('GET', `/v1/deposits/${qr.txid}`);
    expect(state.status).toBe(200);
    const text = await state.text();
    expect(text).not.toContain('base64');
    const read = depositStateResponseSchema.strict().parse(JSON.parse(text));
    expect(read).toMatchObject({
      workflowId: qr.workflowId,
      state: {
        txid: qr.txid,
        amountCentavos: 15_000,
        qr: { payload: qr.payload, expiresAt: qr.expiresAt, imageUrl: `/v1/deposits/${qr.txid}/qrcode.png` },
      },
    });
    expect(read.state.qr).not.toHaveProperty('image');

    const png = await e.call('GET', String(read.state.qr?.imageUrl));
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await png.arrayBuffer());
    expect(bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(`data:image/png;base64,${bytes.toString('base64')}`).toBe(qr.image);
    const image = PNG.sync.read(bytes);
    expect(image.width).toBeGreaterThan(50);
  });

  it("a paid deposit's history, started as the API starts it, carries no QR image", async () => {
    const txid = await paidDeposit();
    await untilStatus(txid, 'completed');
    const handle = e.temporal.workflow.getHandle(depositWorkflowId(txid));
    // The image alone was about 17 KB in three copies; without it the whole history (search
    // attributes, memo, the payment's notification, all encrypted) is within the 6 KB goal.
    // bench/ reports it under load.
    expect(await historyBytes(handle)).toBeLessThanOrEqual(6 * 1024);
  });

  it('a finished deposit answers from what its run returned: its state, its QR, the same QR again', async () => {
    const body = depositBody();
    const created = await json<{ txid: string; image: string }>(
      await e.call('POST', '/v1/deposits', { body }),
    );
    const { txid } = created;
    await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, { payerName: 'Someone' });
    expect((await readAsQueried(txid)).state.status).toBe('completed');
    const again = await e.call('POST', '/v1/deposits', { body: { ...body, txid } });
    expect(again.status).toBe(200);
    expect(await json(again)).toEqual(created);
    const png = await e.call('GET', `/v1/deposits/${txid}/qrcode.png`);
    expect(png.status).toBe(200);
    expect(`data:image/png;base64,${Buffer.from(await png.arrayBuffer()).toString('base64')}`).toBe(
      created.image,
    );
  });

  it('the same txid with another amount, payer or merchant is a 409', async () => {
    const txid = String(Date.now()) + String(++n);
    const body = depositBody({ txid });
    expect((await e.call('POST', '/v1/deposits', { body })).status).toBe(201);
    for (const other of [
      { ...body, amountCentavos: 99 },
      { ...body, client: { ...body.client, cpf: freshCpf() } },
      { ...body, merchant: 'other-merchant' },
    ]) {
      const p = await expectProblem(await e.call('POST', '/v1/deposits', { body: other }), 409, 'conflict');
      expect(p.detail).toMatch(/different deposit/);
    }
  });

  it('a deposit the provider refuses is a 422 with the reason, never a 5xx', async () => {
    const txid = `9${Date.now()}${++n}`;
    const body = { ...depositBody(), txid };
    // Occupy the txid at the provider with another amount: our create is then refused as a duplicate.
    await e.provider.createCharge({ payer: body.client, amountCentavos: 1, txid });
    const refused = expectActivityFailure({
      workflowId: depositWorkflowId(txid),
      activityType: 'createChargeAndRecordAwaitingPayment',
      error: /duplicate transaction/,
    });
    const p = await expectProblem(await e.call('POST', '/v1/deposits', { body }), 422, 'deposit-failed');
    expect(p.detail).toBeTruthy();
    // Once the flow has closed, a repeat finds it (never a second flow for the txid): same answers.
    const handle = e.temporal.workflow.getHandle(depositWorkflowId(txid));
    await handle.result();
    // The provider's notification of the occupied txid comes in through the ingress: when it
    // lands while the flow's first task closes it, the server refuses that task and hands it over
    // again (the QR's local activity runs again), and the API asks again instead of answering 5xx.
    expect(refused().length).toBeGreaterThanOrEqual(1);
    await expectProblem(await e.call('POST', '/v1/deposits', { body }), 422, 'deposit-failed');
    await expectProblem(await e.call('POST', '/v1/deposits', { body: { ...body, amountCentavos: 5 } }), 409);
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    const runs = await eventually(
      () => e.temporal.workflow.count(`WorkflowId = '${handle.workflowId}'`),
      (c) => c.count > 0,
    );
    expect(runs.count).toBe(1);
    await expectProblem(await e.call('GET', `/v1/deposits/${txid}/qrcode.png`), 404, 'qrcode-not-found');
  });

  it('invalid bodies and paths are 400 naming the field, and start nothing', async () => {
    const txid = `7${Date.now()}${++n}`;
    const bad = depositBody({ txid, client: { ...depositBody().client, cpf: '12345678900' } });
    const p = await expectProblem(
      await e.call('POST', '/v1/deposits', { body: bad }),
      400,
      'validation-error',
    );
    expect(p.invalid_params?.map((i) => i.name)).toContain('body.client.cpf');
    const cents = await expectProblem(
      await e.call('POST', '/v1/deposits', { body: depositBody({ txid, amountCentavos: 10.5 }) }),
      400,
    );
    expect(cents.invalid_params?.map((i) => i.name)).toEqual(['body.amountCentavos']);
    const account = await expectProblem(
      await e.call('POST', '/v1/deposits', {
        body: depositBody({
          txid,
          client: { ...depositBody().client, bankAccount: { ispb: '6070119', branch: '1', number: '1' } },
        }),
      }),
      400,
    );
    expect(account.invalid_params).toEqual([
      { name: 'body.client.bankAccount.ispb', reason: 'must be 8 digits' },
    ]);
    // The names the payer's account had before are refused, not dropped: the caller learns where they went.
    const renamed = await expectProblem(
      await e.call('POST', '/v1/deposits', {
        body: depositBody({ txid, client: { ...depositBody().client, bankispb: '60701190' } }),
      }),
      400,
      'validation-error',
    );
    expect(renamed.detail).toBe('body.client.bankispb: renamed to client.bankAccount.ispb');
    expect(await e.workflowExists(depositWorkflowId(txid))).toBe(false);

    const path = await expectProblem(await e.call('GET', '/v1/deposits/abc'), 400);
    expect(path.invalid_params?.[0]?.name).toBe('path.txid');
    await expectProblem(await e.call('GET', '/v1/deposits/123456789'), 404, 'flow-not-found');
  });
});

interface SandboxState {
  deposits: { txid: string; cpf_client: string }[];
  counters: Record<string, unknown>;
}
const sandboxState = async () =>
  (await (await fetch(`${e.sandbox.url}/sandbox/state`)).json()) as SandboxState;

describe('only a verified person deposits (REQUIRE_VERIFIED_FOR_DEPOSITS, on by default)', () => {
  it("a person pixflow never onboarded: 409 not_verified from the deposit's flow, refused under the rules' version, nothing at the provider", async () => {
    const cpf = freshCpf();
    const txid = `3${Date.now()}${++n}`;
    const before = await sandboxState();
    const body = depositBody({ txid }, cpf);
    const p = await expectProblem(await e.call('POST', '/v1/deposits', { body }), 409, 'not-verified');
    expect(p).toMatchObject({
      reason: 'not_verified',
      verification: 'none',
      policyVersion: 1,
      workflowId: depositWorkflowId(txid),
    });
    expect(p.detail).toMatch(/verification is none/);
    expect(p.detail).toMatch(/POST \/v1\/onboardings/);
    expect(JSON.stringify(p)).not.toContain(cpf);
    // The refusal is the flow's, kept: refused, with why and under which version of the rules.
    const read = await e.call('GET', `/v1/deposits/${txid}`);
    expect(read.status).toBe(200);
    expect(((await read.json()) as { state: unknown }).state).toMatchObject({
      status: 'refused',
      reason: 'not_verified',
      policyVersion: 1,
      refusal: { reason: 'not_verified', verification: 'none' },
    });
    // The same request again is answered the same way, from the closed flow.
    expect(
      await expectProblem(await e.call('POST', '/v1/deposits', { body }), 409, 'not-verified'),
    ).toMatchObject({ reason: 'not_verified', policyVersion: 1, workflowId: depositWorkflowId(txid) });
    const after = await sandboxState();
    expect(after.deposits.map((d) => d.txid)).not.toContain(txid);
    expect(after.deposits).toHaveLength(before.deposits.length);
    // Without a txid of the caller's the answer is the same.
    await expectProblem(
      await e.call('POST', '/v1/deposits', { body: depositBody({}, cpf) }),
      409,
      'not-verified',
    );
    expect((await sandboxState()).deposits).toHaveLength(before.deposits.length);
  });

  it('a person whose onboarding still runs: 409 not_verified, saying it is pending', async () => {
    const cpf = freshCpf();
    expect(
      (await e.call('POST', '/v1/onboardings', { body: { cpf, plan: 'plan_basic', event: 'signup' } }))
        .status,
    ).toBe(201);
    await eventually(
      () => onboardingStatus(cpf),
      (s) => s === 'awaiting_liveness',
    );
    const p = await expectProblem(
      await e.call('POST', '/v1/deposits', { body: depositBody({}, cpf) }),
      409,
      'not-verified',
    );
    expect(p).toMatchObject({ reason: 'not_verified', verification: 'pending' });
    expect(p.detail).toMatch(/once it is approved/);
  });

  it('the rule is about starting one: a deposit made before a suspension is still answered the same', async () => {
    const bea = await approvedPerson();
    const txid = `2${Date.now()}${++n}`;
    const body = depositBody({ txid }, bea);
    const first = await e.call('POST', '/v1/deposits', { body });
    expect(first.status).toBe(201);
    const qr = await first.json();
    // The provider contradicts her approved onboarding: her verification is suspended.
    expect(
      await suspendVerification(e.pool, {
        cpfHash: cpfHash(bea, PII_KEY),
        expected: 'approved',
        reason: 'provider_contradicts: failed',
        evidence: {},
        at: new Date(),
      }),
    ).toBe(true);
    const again = await e.call('POST', '/v1/deposits', { body });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual(qr);
    // Another request for the txid is still the conflict it was.
    await expectProblem(
      await e.call('POST', '/v1/deposits', { body: { ...body, amountCentavos: 99 } }),
      409,
      'conflict',
    );
    // A new deposit is refused.
    const p = await expectProblem(
      await e.call('POST', '/v1/deposits', { body: depositBody({}, bea) }),
      409,
      'not-verified',
    );
    expect(p).toMatchObject({ reason: 'not_verified', verification: 'suspended' });
    expect(p.detail).toMatch(/suspended/);
  });
});

type Resolution = ReturnType<typeof depositResolutionResponseSchema.parse>;
type DepositRead = ReturnType<typeof depositStateResponseSchema.parse>;

/** A deposit of Ana's, paid in the sandbox by `payerCpf` (omitted: hers; '': none shown). */
async function paidDeposit(payerCpf?: string) {
  const res = await e.call('POST', '/v1/deposits', { body: depositBody() });
  expect(res.status).toBe(201);
  const { txid } = (await res.json()) as { txid: string };
  await e.sandboxControl(`/sandbox/deposits/${txid}/pay`, {
    payerName: 'Someone',
    ...(payerCpf === undefined ? {} : { payerCpf }),
  });
  return txid;
}

const readDeposit = async (txid: string) => {
  const res = await e.call('GET', `/v1/deposits/${txid}`);
  expect(res.status).toBe(200);
  return depositStateResponseSchema.strict().parse(await res.json());
};
/**
 * Once its run has closed, a deposit is read from what the run returned and its history, asking
 * no worker: the state its query gives, QR included.
 */
async function readAsQueried(txid: string): Promise<DepositRead> {
  const handle = e.temporal.workflow.getHandle(depositWorkflowId(txid));
  await handle.result();
  const { qr, ...state } = await handle.query(depositStateQuery);
  expect(qr).toBeDefined();
  const read = await readDeposit(txid);
  expect(read).toEqual({
    workflowId: handle.workflowId,
    state: { ...state, qr: { ...qr, imageUrl: `/v1/deposits/${txid}/qrcode.png` } },
  });
  return read;
}
const untilStatus = (txid: string, status: string) =>
  eventually(
    () => readDeposit(txid),
    (d: DepositRead) => d.state.status === status,
  );
const resolve = (txid: string, body: unknown) => e.call('POST', `/v1/deposits/${txid}/resolution`, { body });
const flowRow = async (txid: string) =>
  (
    await e.pool.query('SELECT status, reason, details FROM flows WHERE workflow_id = $1', [
      depositWorkflowId(txid),
    ])
  ).rows[0] as { status: string; reason: string | null; details: Record<string, unknown> };

describe('a deposit paid by someone else is held (HOLD_THIRD_PARTY_DEPOSITS, on by default)', () => {
  it('paid by the person: completed, never held', async () => {
    const txid = await paidDeposit();
    const done = await untilStatus(txid, 'completed');
    expect(done.state.payment).toMatchObject({ payerIsClient: true, payerCpfMasked: maskCpf(ana) });
    expect(done.state.resolution).toBeUndefined();
    expect(done.state.reason).toBeUndefined();
  });

  it("paid with no payer CPF shown (the contract allows it empty): the person's own, completed", async () => {
    const txid = await paidDeposit('');
    const done = await untilStatus(txid, 'completed');
    expect(done.state.payment?.payerIsClient).toBe(true);
    expect(done.state.payment?.payerCpfMasked).toBeUndefined();
  });

  it('paid by another CPF: held (third_party_payer) until accepted, then completed with the decision', async () => {
    const payer = freshCpf();
    const txid = await paidDeposit(payer);
    const held = await untilStatus(txid, 'held');
    expect(held.state).toMatchObject({
      reason: 'third_party_payer',
      payment: { payerIsClient: false, payerCpfMasked: maskCpf(payer) },
    });
    expect(held.state.finishedAt).toBeUndefined();
    // The held run shows its status, then writes its row (a local activity): the row follows.
    const row = await eventually(
      () => flowRow(txid),
      (r) => r.status === 'held',
    );
    expect(row).toMatchObject({ status: 'held', reason: 'third_party_payer' });
    // Nothing stored or shown holds the payer's CPF.
    expect(JSON.stringify(row)).not.toContain(payer);
    expect(JSON.stringify(held)).not.toContain(payer);
    // Held is open: operators find it among the person's open flows and by status.
    const customer = await json<{ openFlows: { workflowId: string; status: string }[] }>(
      await e.call('GET', `/v1/customers/${ana}`),
    );
    expect(customer.openFlows).toContainEqual(
      expect.objectContaining({ workflowId: depositWorkflowId(txid), status: 'held' }),
    );
    const listed = await json<{ items: { workflowId: string }[] }>(
      await e.call('GET', `/v1/flows?type=deposit&status=held&cpf=${ana}`),
    );
    expect(listed.items.map((i) => i.workflowId)).toContain(depositWorkflowId(txid));

    const decision = { decision: 'accept', by: 'ops@example.com', reason: 'her husband paid, documented' };
    const res = await resolve(txid, decision);
    expect(res.status).toBe(200);
    const answer: Resolution = depositResolutionResponseSchema.strict().parse(await res.json());
    expect(answer).toEqual({ txid, ...decision, status: 'completed' });
    const done = await readDeposit(txid);
    expect(done.state).toMatchObject({ status: 'completed', resolution: decision });
    expect(done.state.resolution?.at).toEqual(expect.any(String));
    expect(done.state.reason).toBeUndefined();
    expect(await flowRow(txid)).toMatchObject({
      status: 'completed',
      details: { payerIsClient: false, resolution: decision },
    });
    // Decided once: a second decision is refused and changes nothing.
    const p = await expectProblem(
      await resolve(txid, { decision: 'return', by: 'someone@example.com', reason: 'changed my mind' }),
      409,
      'not-held',
    );
    expect(p).toMatchObject({ flowStatus: 'completed' });
    expect((await readDeposit(txid)).state.resolution).toMatchObject(decision);
    // Its last run, the held one, read once closed: the QR is in the state it was continued with.
    expect((await readAsQueried(txid)).state).toMatchObject({ status: 'completed', resolution: decision });
  });

  it('paid by another CPF and returned: to_return (final), with the reason and the decision', async () => {
    const txid = await paidDeposit(freshCpf());
    await untilStatus(txid, 'held');
    const decision = { decision: 'return', by: 'ops@example.com', reason: 'payer unknown to the person' };
    const res = await resolve(txid, decision);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ txid, ...decision, status: 'to_return' });
    const done = await readDeposit(txid);
    expect(done.state).toMatchObject({
      status: 'to_return',
      reason: 'third_party_payer',
      resolution: decision,
    });
    expect(done.state.finishedAt).toEqual(expect.any(String));
    expect(await flowRow(txid)).toMatchObject({
      status: 'to_return',
      reason: 'third_party_payer',
      details: { resolution: decision },
    });
    // Final: no longer among the person's open flows, and its run has closed.
    const customer = await json<{ openFlows: { workflowId: string }[] }>(
      await e.call('GET', `/v1/customers/${ana}`),
    );
    expect(customer.openFlows.map((f) => f.workflowId)).not.toContain(depositWorkflowId(txid));
    await e.temporal.workflow.getHandle(depositWorkflowId(txid)).result();
    const listed = await json<{ items: { workflowId: string }[] }>(
      await e.call('GET', `/v1/flows?type=deposit&status=to_return&cpf=${ana}`),
    );
    expect(listed.items.map((i) => i.workflowId)).toContain(depositWorkflowId(txid));
  });

  it('a resolution for a deposit that is not held is 409 naming its status, and changes nothing', async () => {
    const res = await e.call('POST', '/v1/deposits', { body: depositBody() });
    const { txid } = (await res.json()) as { txid: string };
    const p = await expectProblem(
      await resolve(txid, { decision: 'accept', by: 'ops@example.com', reason: 'looks fine' }),
      409,
      'not-held',
    );
    expect(p).toMatchObject({ flowStatus: 'awaiting_payment' });
    expect(p.detail).toMatch(/awaiting_payment/);
    const state = (await readDeposit(txid)).state;
    expect(state.status).toBe('awaiting_payment');
    expect(state.resolution).toBeUndefined();
    expect((await flowRow(txid)).status).toBe('awaiting_payment');
  });

  it('a resolution with a bad body is 400 naming the field; for an unknown txid 404', async () => {
    const body = { decision: 'accept', by: 'ops@example.com', reason: 'ok' };
    const bad = await expectProblem(
      await resolve('123456', { ...body, decision: 'maybe' }),
      400,
      'validation-error',
    );
    expect(bad.invalid_params?.map((i) => i.name)).toEqual(['body.decision']);
    const missing = await expectProblem(await resolve('123456', { decision: 'return' }), 400);
    expect(missing.invalid_params?.map((i) => i.name).sort()).toEqual(['body.by', 'body.reason']);
    const path = await expectProblem(await resolve('abc', body), 400);
    expect(path.invalid_params?.[0]?.name).toBe('path.txid');
    await expectProblem(await resolve('123456789', body), 404, 'flow-not-found');
  });
});
