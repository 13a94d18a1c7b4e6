import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalResponseSchema } from '../../api/withdrawals-schemas';
import { cpfHash } from '../../common/pii';
import { suspendVerification } from '../../db/customers';
import { recordHistory } from '../helpers/histories';
import {
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  json,
  onboardApproved,
  PII_KEY,
  PNG_SIGNATURE,
  startApiEnv,
} from './support';

// The money rules on withdrawals, each shown on the real stack (API over HTTP, worker, Temporal,
// Postgres, the sandbox and its callbacks through the ingress): a refused withdrawal sends nothing.

const PASSES = '73628883504'; // onboarding completes; every biometric identification passes
const FAILS = '41036021718'; // onboarding completes; every biometric identification fails
const SOMEBODY_ELSE = '52998224725';
const LIMIT = 100_000;
const STEP_UP_ABOVE = 80_000;

let e: ApiEnv;
let n = 0;

beforeAll(async () => {
  e = await startApiEnv(
    // A short link lifetime lets a step-up's identification expire in the test.
    { pollScheduleMs: [1_000], livenessLinkTtlMs: 8_000 },
    {
      env: {
        WITHDRAWAL_DAILY_LIMIT_CENTAVOS: String(LIMIT),
        BIOMETRIC_STEP_UP_CENTAVOS: String(STEP_UP_ABOVE),
        KYC_MAX_AGE: '1h',
      },
    },
  );
});
afterAll(async () => {
  await e?.close();
});

type Withdrawal = ReturnType<typeof withdrawalResponseSchema.parse>;

const onboard = (cpf: string) => onboardApproved(e, cpf);

const withdraw = async (cpf: string, over: Record<string, unknown> = {}): Promise<Withdrawal> => {
  const body = {
    transactionId: `rules-${Date.now()}-${++n}`,
    client: { externalId: `user-${n}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
    pixKey: cpf,
    pixType: 'CPF',
    amountCentavos: 10_000,
    ...over,
  };
  const res = await e.call('POST', '/v1/withdrawals', { body });
  if (res.status === 409) {
    // Refused by the rules in the flow's first step: the problem carries the flow's state.
    const p = (await expectProblem(res, 409, 'withdrawal-refused')) as unknown as Withdrawal;
    expect(p).toMatchObject({
      reason: p.state.reason,
      policyVersion: 1,
      workflowId: `withdrawal-${body.transactionId}`,
    });
    return withdrawalResponseSchema.parse(p);
  }
  expect(res.status).toBe(202);
  return withdrawalResponseSchema.parse(await res.json());
};

const stateOf = async (transactionId: string) =>
  withdrawalResponseSchema.parse(await (await e.call('GET', `/v1/withdrawals/${transactionId}`)).json())
    .state;

/** How many payouts the sandbox received for the transaction. */
const payoutsSent = async (transactionId: string): Promise<number> => {
  const state = (await (await fetch(`${e.sandbox.url}/sandbox/state`)).json()) as {
    counters: { payouts: Record<string, number> };
  };
  return state.counters.payouts[transactionId] ?? 0;
};

const expectRefused = async (w: Withdrawal, reason: string) => {
  // The answer says so at once, GET agrees with the rules' version, and the provider never heard of it.
  expect(w.state).toMatchObject({ status: 'refused', reason });
  expect(await stateOf(w.transactionId)).toMatchObject({ status: 'refused', reason, policyVersion: 1 });
  expect(await payoutsSent(w.transactionId)).toBe(0);
};

describe('withdrawal rules', () => {
  it('not verified: a person never onboarded (KYC suspended) asking R$ 9.000.000,00 to their own key', async () => {
    const w = await withdraw('30281362874', { amountCentavos: 900_000_000 });
    await expectRefused(w, 'not_verified');
  });

  it('not verified: a suspended verification (the provider contradicted the approval) sends nothing', async () => {
    const cpf = freshCpf();
    await onboard(cpf);
    expect(
      await suspendVerification(e.pool, {
        cpfHash: cpfHash(cpf, PII_KEY),
        expected: 'approved',
        reason: 'provider_manual_refused',
        evidence: { statusVerification: 'manual_refused' },
        at: new Date(),
      }),
    ).toBe(true);
    await expectRefused(await withdraw(cpf), 'not_verified');
  });

  it("payee not owner: another person's CPF key, or a key the person never registered", async () => {
    const cpf = freshCpf();
    await onboard(cpf);
    await expectRefused(await withdraw(cpf, { pixKey: SOMEBODY_ELSE }), 'payee_not_owner');
    await expectRefused(
      await withdraw(cpf, { pixKey: 'ana@example.com', pixType: 'EMAIL' }),
      'payee_not_owner',
    );
    await expectRefused(
      await withdraw(cpf, { pixKey: `${cpf};00000000;1;12345;CACC`, pixType: 'ACCOUNT' }),
      'payee_not_owner',
    );
    // Their own CPF key is theirs without registering: sent.
    const own = await withdraw(cpf);
    expect(own.state.status).toBe('sending');
    await eventually(
      () => payoutsSent(own.transactionId),
      (c) => c === 1,
    );
  });

  it('daily limit: two withdrawals asked at once that together pass it, one is refused', async () => {
    const cpf = freshCpf();
    await onboard(cpf);
    const [a, b] = await Promise.all([
      withdraw(cpf, { amountCentavos: 60_000 }),
      withdraw(cpf, { amountCentavos: 60_000 }),
    ]);
    const statuses = [a.state.status, b.state.status].sort();
    expect(statuses).toEqual(['refused', 'sending']);
    const refused = a.state.status === 'refused' ? a : b;
    await expectRefused(refused, 'limit_exceeded');
    // What is left of the day still goes; the refused one does not count against it.
    const rest = await withdraw(cpf, { amountCentavos: LIMIT - 60_000 });
    expect(rest.state.status).toBe('sending');
    await expectRefused(await withdraw(cpf, { amountCentavos: 1 }), 'limit_exceeded');
    const customer = await json<{ payoutsToday: { totalCentavos: number; remainingCentavos: number } }>(
      await e.call('GET', `/v1/customers/${cpf}`),
    );
    expect(customer.payoutsToday).toMatchObject({ totalCentavos: LIMIT, remainingCentavos: 0 });
  });

  it('stale KYC is read again: still regular, sent; suspended at the registry since, refused', async () => {
    const cpf = freshCpf();
    await onboard(cpf);
    const hash = cpfHash(cpf, PII_KEY);
    const age = async (hours: number) =>
      e.pool.query(
        `UPDATE customers SET kyc_read_at = now() - make_interval(hours => $2) WHERE cpf_hash = $1`,
        [hash, hours],
      );
    const readAt = async () =>
      (await e.pool.query('SELECT kyc_read_at FROM customers WHERE cpf_hash = $1', [hash])).rows[0]
        ?.kyc_read_at as Date;

    await age(2);
    const before = await readAt();
    const fine = await withdraw(cpf);
    expect(fine.state.status).toBe('sending');
    expect((await readAt()).getTime()).toBeGreaterThan(before.getTime());

    await age(2);
    await e.sandboxControl(`/sandbox/documents/${cpf}/kyc`, { outcome: 'suspenso' });
    await expectRefused(await withdraw(cpf), 'kyc_status_suspenso');
    const customer = await json<{ kyc: { status: string; ageSeconds: number } }>(
      await e.call('GET', `/v1/customers/${cpf}`),
    );
    expect(customer.kyc.status).toBe('suspenso');
    expect(customer.kyc.ageSeconds).toBeLessThan(60);
  });

  it('step-up above the amount: awaits a biometric identification; passed, the payout is sent', async () => {
    await onboard(PASSES);
    const w = await withdraw(PASSES, { amountCentavos: STEP_UP_ABOVE + 1 });
    expect(w.state).toMatchObject({
      status: 'awaiting_biometrics',
      stepUp: { cause: 'amount_above_step_up', url: expect.stringMatching(/^http/) },
    });
    const stepUp = w.state.stepUp as NonNullable<Withdrawal['state']['stepUp']>;
    expect(Date.parse(stepUp.expiresAt ?? '')).toBeGreaterThan(Date.now());
    const qr = await e.call('GET', stepUp.qrcodeUrl ?? '');
    expect(qr.status).toBe(200);
    expect(Buffer.from(await qr.arrayBuffer()).subarray(0, 8)).toEqual(PNG_SIGNATURE);
    expect(await payoutsSent(w.transactionId)).toBe(0);

    await e.sandboxControl('/sandbox/liveness/complete', { document: PASSES });
    await eventually(
      () => payoutsSent(w.transactionId),
      (c) => c === 1,
    );
    const sent = await eventually(
      () => stateOf(w.transactionId),
      (s) => s.status === 'processing',
    );
    expect(sent.stepUp).toMatchObject({ outcome: 'passed' });
    // Over: the link's image is gone with it.
    expect((await e.call('GET', stepUp.qrcodeUrl ?? '')).status).toBe(410);
    await e.sandboxControl(`/sandbox/withdrawals/${w.transactionId}/settle`);
    await eventually(
      () => stateOf(w.transactionId),
      (s) => s.status === 'completed',
    );
    const payout = e.temporal.workflow.getHandle(w.workflowId);
    expect(await payout.result()).toMatchObject({ status: 'completed' });
    await recordHistory(payout, 'withdrawal-step-up-passed');
    await recordHistory(
      e.temporal.workflow.getHandle(stepUp.biometricsWorkflowId),
      'biometrics-step-up-passed',
    );
  });

  it('step-up: an identification opened before the withdrawal was asked gets a new link, whose outcome counts', async () => {
    const cpf = freshCpf();
    await onboard(cpf);
    const asked = await e.call('POST', `/v1/onboardings/${cpf}/liveness-link`);
    expect(asked.status).toBe(200);
    const earlier = (await asked.json()) as { url: string; issuedAt: string; workflowId: string };
    const w = await withdraw(cpf, { amountCentavos: STEP_UP_ABOVE + 1 });
    const stepUp = w.state.stepUp as NonNullable<Withdrawal['state']['stepUp']>;
    expect(w.state.status).toBe('awaiting_biometrics');
    // The same identification (one per person at a time), with a link issued after the ask.
    expect(stepUp.biometricsWorkflowId).toBe(earlier.workflowId);
    expect(Date.parse(stepUp.issuedAt ?? '')).toBeGreaterThanOrEqual(Date.parse(w.state.startedAt));
    expect(Date.parse(stepUp.issuedAt ?? '')).toBeGreaterThan(Date.parse(earlier.issuedAt));
    // Whoever asks the person's link now gets the new one.
    const again = (await (await e.call('POST', `/v1/onboardings/${cpf}/liveness-link`)).json()) as {
      issuedAt: string;
    };
    expect(again.issuedAt).toBe(stepUp.issuedAt);
    await e.sandboxControl('/sandbox/liveness/complete', { document: cpf });
    await eventually(
      () => payoutsSent(w.transactionId),
      (c) => c === 1,
    );
    const identification = e.temporal.workflow.getHandle(earlier.workflowId);
    expect(await identification.result()).toMatchObject({ status: 'passed' });
    await recordHistory(identification, 'biometrics-step-up-new-link');
  });

  it('step-up: the identification fails, the withdrawal is refused biometrics_failed', async () => {
    await onboard(FAILS);
    const w = await withdraw(FAILS, { amountCentavos: STEP_UP_ABOVE + 1 });
    expect(w.state.status).toBe('awaiting_biometrics');
    await e.sandboxControl('/sandbox/liveness/complete', { document: FAILS });
    await eventually(
      () => stateOf(w.transactionId),
      (s) => s.status === 'refused',
    );
    await expectRefused({ ...w, state: await stateOf(w.transactionId) }, 'biometrics_failed');
  });

  it('step-up: the first payout to a registered account waits for biometrics; the next one does not', async () => {
    const cpf = freshCpf();
    await onboard(cpf);
    const key = { pixKey: `${cpf.slice(0, 4)}@example.com`, pixType: 'EMAIL' };
    expect((await e.call('POST', `/v1/customers/${cpf}/accounts`, { body: key })).status).toBe(201);
    const first = await withdraw(cpf, key);
    expect(first.state).toMatchObject({
      status: 'awaiting_biometrics',
      stepUp: { cause: 'first_payout_to_account' },
    });
    // Nobody completes it: the link expires and the withdrawal is refused, nothing sent.
    await eventually(
      () => stateOf(first.transactionId),
      (s) => s.status === 'refused',
      { timeoutMs: 30_000 },
    );
    await expectRefused({ ...first, state: await stateOf(first.transactionId) }, 'biometrics_timeout');

    // Asked again: a new identification, which the person completes this time.
    const second = await withdraw(cpf, key);
    expect(second.state.status).toBe('awaiting_biometrics');
    // Issued for it: after the first identification ended.
    expect(Date.parse(second.state.stepUp?.issuedAt ?? '')).toBeGreaterThan(
      Date.parse(first.state.stepUp?.expiresAt ?? ''),
    );
    await e.sandboxControl('/sandbox/liveness/complete', { document: cpf });
    await eventually(
      () => payoutsSent(second.transactionId),
      (c) => c === 1,
    );
    const third = await withdraw(cpf, key);
    expect(third.state.status).toBe('sending');
  });
});
