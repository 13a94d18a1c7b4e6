import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customerAccountSchema, customerSchema } from '../../api/customers-schemas';
import { loadConfig } from '../../common/config';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import {
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  json,
  onboardApproved,
  PII_KEY,
  startApiEnv,
} from './support';

// The customer read model on the real stack: onboardings, deposits and withdrawals through the
// API, liveness and payment events from the sandbox through the webhook ingress.

let e: ApiEnv;
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});

beforeAll(async () => {
  // Reconciliation every second: payouts reach their outcome without waiting for a poll.
  // The read model, not the deposit rules (test/api/deposits.test.ts): anyone's deposit starts.
  e = await startApiEnv({ pollScheduleMs: [1_000] });
  // The sandbox's callbacks come in through the API's own ingress, as in production.
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
});
afterAll(async () => {
  await e?.close();
});

type Customer = ReturnType<typeof customerSchema.parse>;
type Account = ReturnType<typeof customerAccountSchema.parse>;

/** The person, or undefined while pixflow has not seen them yet (their onboarding's KYC runs). */
const customerOnceKnown = async (cpf: string): Promise<Customer | undefined> => {
  const res = await e.call('GET', `/v1/customers/${cpf}`);
  if (res.status === 404) return undefined;
  expect(res.status).toBe(200);
  return customerSchema.strict().parse(await res.json());
};

const customerOf = async (cpf: string): Promise<Customer> => {
  const res = await e.call('GET', `/v1/customers/${cpf}`);
  expect(res.status).toBe(200);
  // Exactly the documented shape.
  return customerSchema.strict().parse(await res.json());
};

const onboardingStatus = async (cpf: string) =>
  (await json(await e.call('GET', `/v1/onboardings/${cpf}`))).state.status;

/** Onboards a fresh CPF to the operator's review and decides it there. */
async function onboard(decision: 'approve' | 'refuse'): Promise<string> {
  const cpf = freshCpf();
  const started = await e.call('POST', '/v1/onboardings', {
    body: { cpf, plan: 'plan_basic', event: 'signup' },
  });
  expect(started.status).toBe(201);
  await eventually(
    () => onboardingStatus(cpf),
    (s) => s === 'awaiting_liveness',
  );
  // While it runs, the person is pending: the flow shows a status before its row is written.
  await eventually(
    () => customerOf(cpf),
    (c) => c.verification.status === 'pending',
  );
  // The person finishes the liveness; the provider puts it up for manual review.
  await e.sandboxControl('/sandbox/liveness/complete', { document: cpf });
  await eventually(
    () => onboardingStatus(cpf),
    (s) => s === 'awaiting_review',
  );
  const review = await e.call('POST', `/v1/onboardings/${cpf}/review`, {
    body: { decision, by: 'ops@example.com', reason: 'checked' },
  });
  expect(review.status).toBe(202);
  return cpf;
}

const withdraw = async (cpf: string, amountCentavos: number) => {
  const transactionId = `cust-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const res = await e.call('POST', '/v1/withdrawals', {
    body: {
      transactionId,
      amountCentavos,
      pixKey: cpf,
      pixType: 'CPF',
      client: { externalId: 'user-1', cpf, email: 'ana@example.com', name: 'Ana Souza' },
    },
  });
  // 202 on its way, or 409 when the rules refused it in its first step (its flow keeps the refusal).
  expect([202, 409]).toContain(res.status);
  const statusOf = async () =>
    (await json(await e.call('GET', `/v1/withdrawals/${transactionId}`))).state.status;
  await eventually(statusOf, (s) => s === 'processing' || s === 'refused');
  return { transactionId, statusOf };
};

describe('customers', () => {
  it('an approved onboarding makes the person approved, with the KYC facts and their age', async () => {
    const cpf = await onboard('approve');
    const workflowId = onboardingWorkflowId(cpfHash(cpf, PII_KEY));
    const c = await eventually(
      () => customerOf(cpf),
      (x) => x.verification.status === 'approved',
    );
    expect(c).toMatchObject({
      cpfMasked: maskCpf(cpf),
      cpfHash: cpfHash(cpf, PII_KEY),
      verification: { status: 'approved', by: workflowId, flow: workflowId, suspension: null },
      kyc: { status: 'regular', under18: false, deceased: false, restricted: false, pep: false },
      accounts: [],
      payoutsToday: { totalCentavos: 0, count: 0, limitCentavos: 5_000_000, remainingCentavos: 5_000_000 },
      lastBiometric: null,
      // No registry of impeded people in this stack: never asked.
      eligibility: 'unknown',
      impeded: null,
      closedAt: null,
    });
    expect(c.kyc?.ageSeconds).toBeGreaterThanOrEqual(0);
    expect(Date.parse(c.kyc?.readAt ?? '')).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(c.verification.at ?? '')).toBeGreaterThanOrEqual(Date.parse(c.kyc?.readAt ?? ''));
    // The onboarding has closed: nothing of the person's is still open.
    await eventually(
      () => customerOf(cpf),
      (x) => x.openFlows.length === 0,
    );
  });

  it('a rejected onboarding makes the person rejected', async () => {
    const cpf = await onboard('refuse');
    const c = await eventually(
      () => customerOf(cpf),
      (x) => x.verification.status !== 'pending',
    );
    expect(c.verification).toMatchObject({
      status: 'rejected',
      by: onboardingWorkflowId(cpfHash(cpf, PII_KEY)),
    });
  });

  it('keeps the KYC facts of a refusal and of a PEP (sandbox test documents)', async () => {
    const restricted = '78642562609';
    const pep = '53868402586';
    for (const cpf of [restricted, pep]) {
      const res = await e.call('POST', '/v1/onboardings', {
        body: { cpf, plan: 'plan_basic', event: 'signup' },
      });
      expect([200, 201]).toContain(res.status);
    }
    const refused = await eventually(
      () => customerOnceKnown(restricted),
      (x) => x?.verification.status === 'rejected',
    );
    expect(refused?.kyc).toMatchObject({ status: 'restricted_document', restricted: true });
    // Past KYC, waiting for the liveness: pending, with the facts KYC read.
    const flagged = await eventually(
      () => customerOnceKnown(pep),
      (x) => x?.verification.status === 'pending',
    );
    expect(flagged?.kyc).toMatchObject({ status: 'regular', pep: true, under18: false, deceased: false });
  });

  it("suspends the person when the provider's decision arrives after the onboarding closed the other way", async () => {
    const cpf = await onboard('approve');
    await eventually(
      () => customerOf(cpf),
      (x) => x.verification.status === 'approved',
    );
    // pixflow's operator approved; the provider's reviewer refuses afterwards.
    await e.sandboxControl('/sandbox/liveness/review', { document: cpf, decision: 'refuse' });
    const c = await eventually(
      () => customerOf(cpf),
      (x) => x.verification.status === 'suspended',
    );
    expect(c.verification.suspension).toMatchObject({
      reason: 'provider_contradicts: manual_refused',
      evidence: {
        verificationBefore: 'approved',
        statusVerification: 'manual_refused',
        statusOnboarding: 'refused',
        onboarding: onboardingWorkflowId(cpfHash(cpf, PII_KEY)),
      },
    });
    // The inbox row says what became of the notification.
    const { rows } = await e.pool.query(
      `SELECT last_error FROM webhook_inbox WHERE workflow_id = $1 AND signal_payload->>'statusVerification' = 'manual_refused'`,
      [onboardingWorkflowId(cpfHash(cpf, PII_KEY))],
    );
    expect(rows[0]?.last_error).toMatch(/customer suspended \(provider_contradicts: manual_refused\)/);
  });

  it("counts today's payouts that were not refused and have not failed against the daily limit", async () => {
    const cpf = freshCpf();
    await onboardApproved(e, cpf);
    const done = await withdraw(cpf, 25_050);
    await e.sandboxControl(`/sandbox/withdrawals/${done.transactionId}/settle`);
    await eventually(done.statusOf, (s) => s === 'completed');
    const failed = await withdraw(cpf, 70_000);
    await e.sandboxControl(`/sandbox/withdrawals/${failed.transactionId}/fail`, { reason: 'account closed' });
    await eventually(failed.statusOf, (s) => s === 'failed');
    // Over the limit: refused, and not counted either.
    expect(await (await withdraw(cpf, 5_000_000)).statusOf()).toBe('refused');

    const c = await customerOf(cpf);
    expect(c.verification.status).toBe('approved');
    expect(c.payoutsToday).toMatchObject({
      totalCentavos: 25_050,
      count: 1,
      limitCentavos: 5_000_000,
      remainingCentavos: 5_000_000 - 25_050,
    });
    expect(c.payoutsToday.day).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("registers a deposit's payer bank account as the person's, masked", async () => {
    const cpf = freshCpf();
    await onboardApproved(e, cpf);
    const res = await e.call('POST', '/v1/deposits', {
      body: {
        amountCentavos: 15_000,
        client: {
          externalId: 'user-2',
          cpf,
          email: 'ana@example.com',
          name: 'Ana Souza',
          bankAccount: { ispb: '60701190', branch: '0001', number: '09876543' },
        },
      },
    });
    expect(res.status).toBe(201);
    const list = await e.call('GET', `/v1/customers/${cpf}/accounts`);
    expect(list.status).toBe(200);
    const text = await list.text();
    expect(text).not.toContain('9876543');
    const { items } = JSON.parse(text) as { items: Account[] };
    expect(items).toEqual([
      expect.objectContaining({
        kind: 'bank_account',
        pixType: null,
        source: 'deposit',
        masked: 'ispb 60701190 branch 1 account ***543',
      }),
    ]);
    // The same account in the composite form is the one already registered.
    const same = await e.call('POST', `/v1/customers/${cpf}/accounts`, {
      body: { pixKey: `${cpf};60701190;1;9876543;CACC`, pixType: 'ACCOUNT' },
    });
    expect(same.status).toBe(200);
    expect((await json<Account>(same)).id).toBe(items[0]?.id);
    // The deposit is one of the person's open flows.
    expect((await customerOf(cpf)).openFlows).toEqual([
      expect.objectContaining({ type: 'deposit', status: 'awaiting_payment', amountCentavos: 15_000 }),
    ]);
  });

  it('adds, lists and removes accounts; a CPF key only the own; bad input 400; unknown CPF 404', async () => {
    const unknown = freshCpf();
    await expectProblem(await e.call('GET', `/v1/customers/${unknown}`), 404, 'customer-not-found');
    await expectProblem(await e.call('GET', `/v1/customers/${unknown}/accounts`), 404, 'customer-not-found');
    await expectProblem(
      await e.call('POST', `/v1/customers/${unknown}/accounts`, {
        body: { pixKey: 'ana@example.com', pixType: 'EMAIL' },
      }),
      404,
      'customer-not-found',
    );

    // Known once a flow of theirs exists.
    const cpf = freshCpf();
    await onboardApproved(e, cpf);
    const add = (body: unknown) => e.call('POST', `/v1/customers/${cpf}/accounts`, { body });

    const email = await add({ pixKey: 'Ana.Souza@Example.com', pixType: 'EMAIL' });
    expect(email.status).toBe(201);
    const emailAccount = customerAccountSchema.strict().parse(await email.json());
    expect(emailAccount).toMatchObject({ kind: 'pix_key', pixType: 'EMAIL', source: 'api' });
    expect(emailAccount.masked).toBe('A***@Example.com');
    expect(email.headers.get('location')).toBe(`/v1/customers/${cpf}/accounts/${emailAccount.id}`);
    // E-mail keys are case-insensitive: the same key again.
    const again = await add({ pixKey: 'ana.souza@example.com', pixType: 'EMAIL' });
    expect(again.status).toBe(200);
    expect((await json<Account>(again)).id).toBe(emailAccount.id);

    const own = await add({ pixKey: cpf, pixType: 'CPF' });
    expect(own.status).toBe(201);
    const ownAccount = await json<Account>(own);
    expect(ownAccount.masked).toBe(maskCpf(cpf));

    const other = freshCpf();
    const notOwn = await expectProblem(await add({ pixKey: other, pixType: 'CPF' }), 422, 'payee-not-owner');
    expect(notOwn.invalid_params?.map((p) => p.name)).toEqual(['body.pixKey']);
    const notOwnComposite = await expectProblem(
      await add({ pixKey: `${other};60701190;1234;555;CACC`, pixType: 'ACCOUNT' }),
      422,
      'payee-not-owner',
    );
    expect(notOwnComposite.invalid_params?.map((p) => p.name)).toEqual(['body.pixKey']);

    const composite = await add({ pixKey: 'ana@example.com;60701190;1234;0098765;SVGS', pixType: 'ACCOUNT' });
    expect(composite.status).toBe(201);
    expect(await json<Account>(composite)).toMatchObject({
      kind: 'bank_account',
      pixType: null,
      masked: 'ispb 60701190 branch 1234 account ***765',
    });

    for (const [body, field] of [
      [{ pixKey: 'not-an-email', pixType: 'EMAIL' }, 'body.pixKey'],
      [{ pixKey: '+5511', pixType: 'PHONE' }, 'body.pixKey'],
      [{ pixKey: 'x;60701190;1;2;CACC', pixType: 'ACCOUNT' }, 'body.pixKey'],
      [{ pixKey: 'ana@example.com', pixType: 'IBAN' }, 'body.pixType'],
      [{ pixType: 'EMAIL' }, 'body.pixKey'],
    ] as const) {
      const p = await expectProblem(await add(body), 400, 'validation-error');
      expect(p.invalid_params?.map((x) => x.name)).toContain(field);
    }
    const badCpf = await expectProblem(await e.call('GET', '/v1/customers/12345678900/accounts'), 400);
    expect(badCpf.invalid_params?.map((x) => x.name)).toEqual(['path.cpf']);
    const badId = await expectProblem(await e.call('DELETE', `/v1/customers/${cpf}/accounts/abc`), 400);
    expect(badId.invalid_params?.map((x) => x.name)).toEqual(['path.id']);

    const listed = await e.call('GET', `/v1/customers/${cpf}/accounts`);
    const listText = await listed.text();
    // Shown masked: neither the key nor the CPF nor the account number in plain text.
    expect(listText).not.toMatch(/ana\.souza|0098765|98765/i);
    expect(listText).not.toContain(cpf);
    expect((JSON.parse(listText) as { items: Account[] }).items.map((a) => a.masked)).toEqual([
      'A***@Example.com',
      maskCpf(cpf),
      'ispb 60701190 branch 1234 account ***765',
    ]);

    expect((await e.call('DELETE', `/v1/customers/${cpf}/accounts/${emailAccount.id}`)).status).toBe(204);
    await expectProblem(
      await e.call('DELETE', `/v1/customers/${cpf}/accounts/${emailAccount.id}`),
      404,
      'account-not-found',
    );
    // Another person's account id is not this person's to remove.
    await expectProblem(
      await e.call('DELETE', `/v1/customers/${freshCpf()}/accounts/${ownAccount.id}`),
      404,
      'account-not-found',
    );
    expect((await customerOf(cpf)).accounts.map((a) => a.pixType)).toEqual(['CPF', null]);
    // Removed, it can be registered again (a new registration).
    const back = await add({ pixKey: 'ana.souza@example.com', pixType: 'EMAIL' });
    expect(back.status).toBe(201);
    expect((await json<Account>(back)).id).not.toBe(emailAccount.id);
  });
});
