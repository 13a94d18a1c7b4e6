import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpfHash } from '../../common/pii';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import { brandKey, setUpBrand, testBrand } from '../helpers/brands';
import { testCodecKeys } from '../helpers/temporal';
import { type ApiEnv, freshCpf, onboardApproved, PII_KEY, startApiEnv } from './support';

// A brand sees only the people it has met (docs/brands.md, "People a brand knows"), on the real
// API, worker, Temporal and Postgres. A person onboarded through the default brand's key (A) is,
// to brand B, an unknown CPF on every person route, word for word; B's deposit and payout for them
// are refused as for a person never verified, nothing sent to the provider. Once B starts their
// onboarding, the person's one verification answers at once (no second KYC or liveness at the
// provider), B reads them and moves their money, and the daily payout limit stays one across A
// and B.

const DAILY_LIMIT = 10_000;
const B = testBrand();
let e: ApiEnv;
let keyB: string;
const person = freshCpf();
const unknownCpf = freshCpf();
const client = (cpf: string) => ({
  externalId: 'people-user',
  cpf,
  email: 'lia@example.com',
  name: 'Lia Reis',
});
const requests = (name: string) => e.sandbox.state.counters.requests[name as never] ?? 0;
const newTxid = () => `${Date.now()}${randomBytes(4).readUInt32BE()}`;

/** A's call (the bootstrap key, the default brand's) or B's. */
const asA = (method: string, path: string, body?: unknown) => e.call(method, path, { body });
const asB = (method: string, path: string, body?: unknown) => e.call(method, path, { body, key: keyB });

/** An answer with the CPF it named put back as `{cpf}`, to compare with another CPF's. */
async function answerOf(res: Response, cpf: string) {
  const text = (await res.text()).split(cpf).join('{cpf}');
  return { status: res.status, type: res.headers.get('content-type'), text };
}

beforeAll(async () => {
  e = await startApiEnv({}, { env: { WITHDRAWAL_DAILY_LIMIT_CENTAVOS: String(DAILY_LIMIT) } });
  await setUpBrand(e.pool, { codecKeys: testCodecKeys, hashKey: PII_KEY }, B);
  keyB = await brandKey(e.pool, B.id);
  await onboardApproved(e, person);
}, 240_000);
afterAll(() => e?.close());

describe('a person another brand onboarded', () => {
  it('is to B an unknown CPF on every person route, word for word, while A reads them', async () => {
    const registered = await asA('POST', `/v1/customers/${person}/accounts`, {
      pixKey: 'lia@example.com',
      pixType: 'EMAIL',
    });
    expect(registered.status, await registered.clone().text()).toBe(201);
    const accountId = ((await registered.json()) as { id: string }).id;
    const routes: Array<[string, (cpf: string) => string, unknown?]> = [
      ['GET', (cpf) => `/v1/customers/${cpf}`],
      ['GET', (cpf) => `/v1/customers/${cpf}/accounts`],
      ['POST', (cpf) => `/v1/customers/${cpf}/accounts`, { pixKey: 'other@example.com', pixType: 'EMAIL' }],
      ['DELETE', (cpf) => `/v1/customers/${cpf}/accounts/${accountId}`],
      ['GET', (cpf) => `/v1/customers/${cpf}/deposit-limits`],
      ['PUT', (cpf) => `/v1/customers/${cpf}/deposit-limits`, { daily: 100 }],
      ['GET', (cpf) => `/v1/onboardings/${cpf}`],
      ['POST', (cpf) => `/v1/onboardings/${cpf}/liveness-link`],
      ['GET', (cpf) => `/v1/onboardings/${cpf}/liveness-link/qrcode.png`],
      [
        'POST',
        (cpf) => `/v1/onboardings/${cpf}/review`,
        { decision: 'approve', by: 'ops@example.com', reason: 'document checked by hand' },
      ],
      ['GET', (cpf) => `/v1/biometrics/${cpf}`],
    ];
    for (const [method, path, body] of routes) {
      const what = `${method} ${path('{cpf}')}`;
      const known = await answerOf(await asB(method, path(person), body), person);
      const unknown = await answerOf(await asB(method, path(unknownCpf), body), unknownCpf);
      expect(known, what).toEqual(unknown);
      expect(known.status, what).toBe(404);
    }
    // A reads the person, their account and limits untouched by B.
    const customer = await asA('GET', `/v1/customers/${person}`);
    expect(customer.status).toBe(200);
    expect(await customer.json()).toMatchObject({
      verification: { status: 'approved' },
      accounts: [{ id: accountId }],
    });
    const limits = (await (await asA('GET', `/v1/customers/${person}/deposit-limits`)).json()) as {
      daily: { limitCentavos: number | null };
    };
    expect(limits.daily.limitCentavos).toBeNull();

    // B's list holds none of the person's flows, their onboarding not even; A's holds it.
    const onboarding = onboardingWorkflowId(cpfHash(person, PII_KEY));
    for (const query of [`?cpf=${person}`, '?type=onboarding', '']) {
      const listed = await (await asB('GET', `/v1/flows${query}`)).text();
      expect(listed, query).not.toContain(onboarding);
    }
    expect(await (await asA('GET', `/v1/flows?cpf=${person}`)).text()).toContain(onboarding);
  });

  it("refuses B's deposit and payout for them as for a person never verified, nothing sent to the provider", async () => {
    const sent = { deposit: requests('deposit'), withdraw: requests('withdraw') };
    const deposit = await asB('POST', '/v1/deposits', {
      txid: newTxid(),
      amountCentavos: 1_000,
      client: client(person),
    });
    const body = (await deposit.json()) as Record<string, unknown>;
    expect(deposit.status, JSON.stringify(body)).toBe(409);
    expect(body).toMatchObject({ type: expect.stringMatching(/not-verified$/), verification: 'none' });
    // The same words as for a CPF nobody onboarded.
    const never = (await (
      await asB('POST', '/v1/deposits', {
        txid: newTxid(),
        amountCentavos: 1_000,
        client: client(unknownCpf),
      })
    ).json()) as Record<string, unknown>;
    expect({ type: body.type, detail: body.detail, verification: body.verification }).toEqual({
      type: never.type,
      detail: never.detail,
      verification: never.verification,
    });

    const payout = await asB('POST', '/v1/withdrawals', {
      transactionId: `people-wd-${newTxid()}`,
      client: client(person),
      pixKey: person,
      pixType: 'CPF',
      amountCentavos: 1_000,
    });
    const refusal = (await payout.json()) as Record<string, unknown>;
    expect(payout.status, JSON.stringify(refusal)).toBe(409);
    expect(refusal).toMatchObject({
      type: expect.stringMatching(/withdrawal-refused$/),
      reason: 'not_verified',
    });
    expect({ deposit: requests('deposit'), withdraw: requests('withdraw') }).toEqual(sent);
  });

  it('answers B at once once B onboards them, with no second KYC or liveness, then B reads them and moves money within the one daily limit', async () => {
    const provider = { kyc: requests('kyc'), liveness: requests('liveness') };
    const started = await asB('POST', '/v1/onboardings', {
      cpf: person,
      plan: 'plan_basic',
      event: 'onboarding',
    });
    expect(started.status, await started.clone().text()).toBe(200);
    expect(((await started.json()) as { state: { status: string } }).state.status).toBe('approved');
    expect({ kyc: requests('kyc'), liveness: requests('liveness') }).toEqual(provider);

    // B reads the person's one verification, and their accounts, as A does.
    const [atA, atB] = await Promise.all(
      [asA, asB].map(async (as) => (await as('GET', `/v1/customers/${person}`)).json()),
    );
    expect(atB).toMatchObject({ verification: (atA as { verification: unknown }).verification });
    expect((atB as { accounts: unknown }).accounts).toEqual((atA as { accounts: unknown }).accounts);
    expect((await asB('GET', `/v1/onboardings/${person}`)).status).toBe(200);
    expect(await (await asB('GET', `/v1/flows?cpf=${person}`)).text()).toContain(
      onboardingWorkflowId(cpfHash(person, PII_KEY)),
    );

    // B's deposit reaches the provider.
    const depositsBefore = requests('deposit');
    const deposit = await asB('POST', '/v1/deposits', {
      txid: newTxid(),
      amountCentavos: 1_000,
      client: client(person),
    });
    expect(deposit.status, await deposit.clone().text()).toBe(201);
    expect(requests('deposit')).toBe(depositsBefore + 1);

    // One daily payout limit for the person, A's payouts and B's counted together.
    const payout = (cents: number) => ({
      transactionId: `people-wd-${newTxid()}`,
      client: client(person),
      pixKey: person,
      pixType: 'CPF',
      amountCentavos: cents,
    });
    const atAFirst = await asA('POST', '/v1/withdrawals', payout(6_000));
    expect(atAFirst.status, await atAFirst.clone().text()).toBe(202);
    const over = await asB('POST', '/v1/withdrawals', payout(DAILY_LIMIT - 6_000 + 1));
    expect(over.status).toBe(409);
    expect(await over.json()).toMatchObject({ reason: 'limit_exceeded' });
    const within = await asB('POST', '/v1/withdrawals', payout(DAILY_LIMIT - 6_000));
    expect(within.status, await within.clone().text()).toBe(202);
  });
});
