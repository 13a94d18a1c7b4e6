import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositLimitsSchema } from '../../api/customers-schemas';
import { loadConfig } from '../../common/config';
import { depositWorkflowId } from '../../contracts/deposit';
import { onboardPeople } from '../helpers/people';
import { expectActivityFailure } from '../helpers/sdk-log';
import { type ApiEnv, eventually, expectProblem, freshCpf, peopleAt, startApiEnv } from './support';

// The limits a person sets on their own deposits, on the real stack: the API, a worker, the
// Temporal dev server, Postgres and the sandbox over HTTP.

const COOLING_OFF_MS = 6_000;
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});

let n = 0;
const txid = () => Array.from({ length: 32 }, () => randomInt(10)).join('');
const depositBody = (cpf: string, amountCentavos: number, over: Record<string, unknown> = {}) => ({
  client: { externalId: `user-${++n}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
  amountCentavos,
  ...over,
});

const limitsOf = async (e: ApiEnv, cpf: string) => {
  const res = await e.call('GET', `/v1/customers/${cpf}/deposit-limits`);
  expect(res.status).toBe(200);
  return depositLimitsSchema.strict().parse(await res.json());
};
const setLimits = async (e: ApiEnv, cpf: string, body: unknown) => {
  const res = await e.call('PUT', `/v1/customers/${cpf}/deposit-limits`, { body });
  expect(res.status, JSON.stringify(await res.clone().json())).toBe(200);
  return depositLimitsSchema.strict().parse(await res.json());
};
const deposit = (e: ApiEnv, cpf: string, amountCentavos: number, over: Record<string, unknown> = {}) =>
  e.call('POST', '/v1/deposits', { body: depositBody(cpf, amountCentavos, over) });

/** A refused deposit's problem: what the rule says, and what is left per period. */
async function overLimit(res: Response) {
  const p = (await expectProblem(res, 409, 'deposit-limit-exceeded')) as unknown as {
    reason: string;
    exceeded: string[];
    remainingCentavos: Record<string, number>;
    detail: string;
  };
  expect(p.reason).toBe('deposit_limit_exceeded');
  return p;
}

describe('deposit limits of a verified person', () => {
  let e: ApiEnv;
  let ana: string;
  let bia: string;

  beforeAll(async () => {
    e = await startApiEnv(
      { pollScheduleMs: [1_000] },
      { env: { DEPOSIT_LIMIT_COOLING_OFF_MS: String(COOLING_OFF_MS) } },
    );
    await e.sandboxControl('/sandbox/notifications', {
      url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
      partnerId: WEBHOOK_PARTNER_ID,
    });
    [ana, bia] = (await onboardPeople(await peopleAt(e), 2)).all.map((p) => p.cpf) as [string, string];
  });
  afterAll(async () => {
    await e?.close();
  });

  it('sets and reads the limits per São Paulo day, ISO week and month', async () => {
    const none = await limitsOf(e, ana);
    expect(none.timeZone).toBe('America/Sao_Paulo');
    for (const p of [none.daily, none.weekly, none.monthly]) {
      expect(p).toMatchObject({
        limitCentavos: null,
        pending: null,
        countedCentavos: 0,
        remainingCentavos: null,
      });
    }

    const set = await setLimits(e, ana, { daily: 20_000, weekly: 100_000 });
    expect(set.daily).toMatchObject({ limitCentavos: 20_000, pending: null, remainingCentavos: 20_000 });
    expect(set.weekly).toMatchObject({ limitCentavos: 100_000, pending: null, remainingCentavos: 100_000 });
    expect(set.monthly.limitCentavos).toBeNull();
    // A period left out stays as it is.
    const monthly = await setLimits(e, ana, { monthly: 500_000 });
    expect(monthly.daily.limitCentavos).toBe(20_000);
    expect(monthly.monthly.limitCentavos).toBe(500_000);
    expect(await limitsOf(e, ana)).toEqual(monthly);

    // The periods are São Paulo's calendar (UTC-3): midnight there, a Monday, the 1st.
    const local = (iso: string) => new Date(Date.parse(iso) - 3 * 3_600_000);
    const { daily, weekly } = monthly;
    expect(daily.start).toMatch(/T03:00:00\.000Z$/);
    expect(Date.parse(daily.end) - Date.parse(daily.start)).toBe(86_400_000);
    expect(local(weekly.start).getUTCDay()).toBe(1);
    expect(Date.parse(weekly.end) - Date.parse(weekly.start)).toBe(7 * 86_400_000);
    expect(local(monthly.monthly.start).getUTCDate()).toBe(1);
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(daily.start));
    expect(Date.now()).toBeLessThan(Date.parse(daily.end));
  });

  it('lets exactly one of several concurrent deposits over the limit through, and says what is left', async () => {
    await setLimits(e, ana, { daily: 20_000 });
    const txids = [txid(), txid(), txid(), txid()];
    const answers = await Promise.all(txids.map((t) => deposit(e, ana, 15_000, { txid: t })));
    const statuses = answers.map((r) => r.status);
    expect(statuses.filter((s) => s === 201)).toHaveLength(1);
    expect(statuses.filter((s) => s === 409)).toHaveLength(3);
    for (const [i, res] of answers.entries()) {
      if (res.status !== 409) continue;
      const p = await overLimit(res);
      expect(p.exceeded).toEqual(['daily']);
      expect(p.remainingCentavos).toEqual({ daily: 5_000, weekly: 85_000, monthly: 485_000 });
      // The refused deposit's flow keeps why, and created nothing at the provider (no QR).
      expect(p).toMatchObject({ policyVersion: 1, workflowId: depositWorkflowId(String(txids[i])) });
      const read = await e.call('GET', `/v1/deposits/${txids[i]}`);
      const { state } = (await read.json()) as { state: { status: string; reason: string; qr?: unknown } };
      expect(state).toMatchObject({ status: 'refused', reason: 'deposit_limit_exceeded', policyVersion: 1 });
      expect(state.qr).toBeUndefined();
    }
    const limits = await limitsOf(e, ana);
    expect(limits.daily).toMatchObject({ countedCentavos: 15_000, remainingCentavos: 5_000 });
    expect(limits.weekly.countedCentavos).toBe(15_000);

    // The accepted deposit asked again is answered as before, not refused by its own amount.
    const accepted = txids[statuses.indexOf(201)];
    const again = await deposit(e, ana, 15_000, { txid: accepted });
    expect(again.status).toBe(200);
    // What fits still goes through.
    expect((await deposit(e, ana, 5_000)).status).toBe(201);
    expect((await limitsOf(e, ana)).daily.remainingCentavos).toBe(0);

    // Paid, it still counts.
    await e.sandboxControl(`/sandbox/deposits/${accepted}/pay`, { payerName: 'Ana Souza', payerCpf: ana });
    await eventually(
      async () =>
        ((await (await e.call('GET', `/v1/deposits/${accepted}`)).json()) as { state: { status: string } })
          .state.status,
      (status) => status === 'completed',
      { timeoutMs: 30_000 },
    );
    expect((await limitsOf(e, ana)).daily).toMatchObject({ countedCentavos: 20_000, remainingCentavos: 0 });
    await overLimit(await deposit(e, ana, 1));
  });

  it('applies a lower limit at once', async () => {
    await setLimits(e, bia, { daily: 100_000 });
    expect((await deposit(e, bia, 30_000)).status).toBe(201);
    const lowered = await setLimits(e, bia, { daily: 40_000 });
    expect(lowered.daily).toMatchObject({ limitCentavos: 40_000, pending: null, remainingCentavos: 10_000 });
    const p = await overLimit(await deposit(e, bia, 15_000));
    expect(p.remainingCentavos).toEqual({ daily: 10_000 });
    expect(p.detail).toMatch(/daily/);
    expect((await deposit(e, bia, 10_000)).status).toBe(201);
  });

  it('applies a raised or removed limit only after the cooling-off', async () => {
    // bia has 40.000 counted today against a daily limit of 40.000 (the test above).
    const asked = Date.now();
    const raised = await setLimits(e, bia, { daily: 60_000, weekly: 50_000 });
    const appliesAt = Date.parse(raised.daily.pending?.appliesAt ?? '');
    expect(raised.daily).toMatchObject({ limitCentavos: 40_000, pending: { limitCentavos: 60_000 } });
    expect(appliesAt).toBeGreaterThanOrEqual(asked + COOLING_OFF_MS - 1_000);
    expect(appliesAt).toBeLessThanOrEqual(Date.now() + COOLING_OFF_MS);
    // A first weekly limit is a lower one: at once.
    expect(raised.weekly).toMatchObject({ limitCentavos: 50_000, pending: null });
    // Asked again, the same raise keeps its time.
    expect((await setLimits(e, bia, { daily: 60_000 })).daily.pending?.appliesAt).toBe(
      raised.daily.pending?.appliesAt,
    );
    // Removing the weekly limit waits too.
    const removing = await setLimits(e, bia, { weekly: null });
    expect(removing.weekly).toMatchObject({ limitCentavos: 50_000, pending: { limitCentavos: null } });

    const refused = await overLimit(await deposit(e, bia, 10_000));
    expect(refused.exceeded).toEqual(['daily']);
    expect(refused.remainingCentavos).toEqual({ daily: 0, weekly: 10_000 });

    await eventually(
      () => Date.now(),
      (t) => t > appliesAt + 100,
      { timeoutMs: COOLING_OFF_MS * 3 },
    );
    const now = await limitsOf(e, bia);
    expect(now.daily).toMatchObject({ limitCentavos: 60_000, pending: null, remainingCentavos: 20_000 });
    expect(now.weekly).toMatchObject({ limitCentavos: null, pending: null, remainingCentavos: null });
    expect((await deposit(e, bia, 15_000)).status).toBe(201);
    // A lower limit cancels a pending raise.
    await setLimits(e, bia, { daily: 200_000 });
    expect((await setLimits(e, bia, { daily: 55_000 })).daily).toMatchObject({
      limitCentavos: 55_000,
      pending: null,
    });
  });

  it('refuses bad input with problem+json naming the field, and changes nothing', async () => {
    const before = await limitsOf(e, ana);
    const unknown = freshCpf();
    await expectProblem(
      await e.call('GET', `/v1/customers/${unknown}/deposit-limits`),
      404,
      'customer-not-found',
    );
    await expectProblem(
      await e.call('PUT', `/v1/customers/${unknown}/deposit-limits`, { body: { daily: 1_000 } }),
      404,
      'customer-not-found',
    );
    const invalidCpf = await expectProblem(
      await e.call('GET', '/v1/customers/12345678900/deposit-limits'),
      400,
    );
    expect(invalidCpf.invalid_params?.[0]?.name).toBe('path.cpf');

    const cases: [unknown, string][] = [
      [{ daily: -1 }, 'body.daily'],
      [{ weekly: 1_000.5 }, 'body.weekly'],
      [{ monthly: '1000' }, 'body.monthly'],
      [{ daily: 1_000, dayly: 500 }, 'body'],
    ];
    for (const [body, field] of cases) {
      const p = await expectProblem(
        await e.call('PUT', `/v1/customers/${ana}/deposit-limits`, { body }),
        400,
        'validation-error',
      );
      expect(
        p.invalid_params?.map((i) => i.name),
        JSON.stringify(body),
      ).toContain(field);
    }
    expect(await limitsOf(e, ana)).toMatchObject({
      daily: { limitCentavos: before.daily.limitCentavos },
      weekly: { limitCentavos: before.weekly.limitCentavos },
      monthly: { limitCentavos: before.monthly.limitCentavos },
    });
  });
});

describe('deposit limits and deposits that end unpaid', () => {
  let e: ApiEnv;

  beforeAll(async () => {
    // QR codes that expire in seconds; deposits without an onboarding, so no person to onboard.
    e = await startApiEnv(
      { pollScheduleMs: [1_000] },
      { env: { REQUIRE_VERIFIED_FOR_DEPOSITS: 'false' }, sandbox: { depositExpiryMs: 8_000 } },
    );
  });
  afterAll(async () => {
    await e?.close();
  });

  it('counts a deposit while it may be paid, and no longer once it expired or failed', async () => {
    const cpf = freshCpf();
    const first = await deposit(e, cpf, 10_000);
    expect(first.status).toBe(201);
    const { txid: firstTxid } = (await first.json()) as { txid: string };
    expect((await setLimits(e, cpf, { daily: 30_000 })).daily.countedCentavos).toBe(10_000);
    // The provider refuses this one (its txid taken with another amount): it ends failed, and
    // never counts.
    const taken = txid();
    const body = depositBody(cpf, 15_000, { txid: taken });
    await e.provider.createCharge({ payer: body.client, amountCentavos: 1, txid: taken });
    const refused = expectActivityFailure({
      workflowId: depositWorkflowId(taken),
      activityType: 'createChargeAndRecordAwaitingPayment',
      error: /duplicate transaction/,
    });
    await expectProblem(await e.call('POST', '/v1/deposits', { body }), 422, 'deposit-failed');
    await e.temporal.workflow.getHandle(depositWorkflowId(taken)).result();
    expect(refused().length).toBeGreaterThanOrEqual(1);
    expect((await limitsOf(e, cpf)).daily.countedCentavos).toBe(10_000);
    await setLimits(e, cpf, { daily: 10_000 });

    // Waiting for payment, it counts.
    const p = await overLimit(await deposit(e, cpf, 5_000));
    expect(p.remainingCentavos).toEqual({ daily: 0 });

    await eventually(
      async () =>
        ((await (await e.call('GET', `/v1/deposits/${firstTxid}`)).json()) as { state: { status: string } })
          .state.status,
      (status) => status === 'expired',
      { timeoutMs: 60_000 },
    );
    expect((await limitsOf(e, cpf)).daily).toMatchObject({ countedCentavos: 0, remainingCentavos: 10_000 });
    expect((await deposit(e, cpf, 10_000)).status).toBe(201);
  });
});
