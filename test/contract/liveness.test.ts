import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDocumentFor } from '../../sandbox/test-documents';
import {
  DeceasedOrUnderAgeError,
  deceasedOrUnderAgeErrorSchema,
  InvalidDocumentError,
  livenessCallbackSchema,
  livenessInvalidDocumentErrorSchema,
  livenessResponseSchema,
  RestrictedDocumentError,
  restrictDocumentErrorSchema,
} from '../helpers/identity-payments-wire';
import { clientFor, control, rawToken, startProviderSandbox, startReceiver, waitFor } from './support';

type Sandbox = Awaited<ReturnType<typeof startProviderSandbox>>;
let sb: Sandbox;
let client: ReturnType<typeof clientFor>;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let clock = Date.now();
let n = 0;

beforeAll(async () => {
  sb = await startProviderSandbox({ now: () => clock, livenessUrlValidityMs: 60_000 });
  client = clientFor(sb.url);
  receiver = await startReceiver();
  await control(sb.url, '/sandbox/notifications', {
    url: `${receiver.url}/liveness`,
    partnerId: 'p-3',
    points: ['liveness'],
  });
});
afterAll(async () => {
  await sb.close();
  await receiver.close();
});

/** A liveness request through the client, its answer checked against the document's whole record. */
async function start(cpf: string) {
  n += 1;
  const answer = await client.startLiveness(cpf, {
    correlationId: `corr-${n}`,
    plan: 'plan_basic',
    event: 'personal_data_change',
    redirectUrl: '/done',
  });
  return livenessResponseSchema.parse(answer);
}

async function callbacksFor(cpf: string, count: number) {
  await waitFor(() => receiver.received.filter((r) => r.body.document === cpf).length >= count);
  return receiver.received
    .filter((r) => r.body.document === cpf)
    .map((r) => livenessCallbackSchema.parse(r.body));
}

describe('liveness', () => {
  it('starts onboarding with the contract response and reuses the url while valid', async () => {
    const cpf = '47372560802';
    const first = await start(cpf);
    expect(livenessResponseSchema.safeParse(first).success).toBe(true);
    expect(first).toMatchObject({
      status_onboarding: 'requested',
      status_verification: 'requested',
      event: 'personal_data_change',
      correlation_id: `corr-${n}`,
    });
    expect(first.action.type).toBe('onboarding');
    expect(first.action.url).toMatch(new RegExp(`^${sb.url}/liveness/[0-9a-f-]{36}$`));
    expect(first.action.qrcode).toMatch(/^data:image\/png;base64,/);
    expect(first.url_callback.sent).toEqual([
      { url: `${receiver.url}/liveness`, correlation_id: `corr-${n}` },
    ]);
    expect(first.kyc.status).toBe('REGULAR');
    expect(first.kyc.cpf).toBe(cpf);

    clock += 59_000;
    const again = await start(cpf);
    expect(again.action.url).toBe(first.action.url);
    expect(again.transaction_id).not.toBe(first.transaction_id);
    clock += 2_000;
    const fresh = await start(cpf);
    expect(fresh.action.url).not.toBe(first.action.url);

    const page = await fetch(fresh.action.url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await (await fetch(first.action.url)).text()).toMatch(/expired/);
  });

  // The document's sample spelling; test/sandbox/dialect.test.ts has the dialect that wants correlationId.
  it('requires the correlation_id spelling in the request', async () => {
    const res = await fetch(`${sb.url}/kyc-liveness/47372560802`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: await rawToken(sb.url) },
      body: JSON.stringify({ correlationId: 'camel', plan: 'plan_full', event: 'x' }),
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toContain('correlation_id');
  });

  it('default document: manual_approve_pending, then an operator decision; approved -> biometric_identification', async () => {
    const cpf = '73158386003';
    const s = await start(cpf);
    const done = await control(sb.url, '/sandbox/liveness/complete', { document: cpf });
    expect(done.body).toMatchObject({ statusVerification: 'manual_approve_pending' });
    const cbs = await callbacksFor(cpf, 2);
    expect(cbs.map((c) => c.status_verification)).toEqual(['processing', 'manual_approve_pending']);
    expect(cbs[1]).toMatchObject({
      correlation_id: s.correlation_id,
      transaction_id: s.transaction_id,
      action_type: 'onboarding',
      partner_id: 'p-3',
    });
    expect(
      (await control(sb.url, '/sandbox/liveness/review', { document: cpf, decision: 'approve' })).body,
    ).toMatchObject({ statusVerification: 'manual_approved' });
    expect((await callbacksFor(cpf, 3))[2]?.status_verification).toBe('manual_approved');
    const next = await start(cpf);
    expect(next.action.type).toBe('biometric_identification');
    expect(next.action.url).not.toBe(s.action.url);
  });

  it('refused review keeps the user in onboarding', async () => {
    const cpf = '05273304423';
    await start(cpf);
    await control(sb.url, '/sandbox/liveness/complete', { document: cpf });
    await control(sb.url, '/sandbox/liveness/review', { document: cpf, decision: 'refuse' });
    expect((await callbacksFor(cpf, 3))[2]?.status_verification).toBe('manual_refused');
    expect((await start(cpf)).action.type).toBe('onboarding');
  });

  it.each([
    ['approved_biometrics_pass', 'completed', 'completed'],
    ['approved_biometrics_fail', 'completed', 'failed'],
    ['rejected_document', 'failed', undefined],
    ['rejected_proof_of_life', 'failed', undefined],
  ] as const)('test document %s: onboarding %s, biometrics %s', async (outcome, onboarding, biometrics) => {
    const { cpf } = testDocumentFor('regular', outcome);
    const s = await start(cpf);
    expect(s.action.type).toBe('onboarding');
    const r = await control(sb.url, '/sandbox/liveness/complete', { document: cpf });
    expect(r.body.statusVerification).toBe(onboarding);
    const cbs = await callbacksFor(cpf, 2);
    expect(cbs[1]?.status_verification).toBe(onboarding);
    expect((await control(sb.url, '/sandbox/liveness/complete', { document: cpf })).status).toBe(409);
    const next = await start(cpf);
    if (biometrics === undefined) {
      expect(next.action.type).toBe('onboarding');
      return;
    }
    expect(next.action.type).toBe('biometric_identification');
    const b = await control(sb.url, '/sandbox/liveness/complete', { document: cpf });
    expect(b.body.statusVerification).toBe(biometrics);
    expect((await callbacksFor(cpf, 4))[3]).toMatchObject({
      action_type: 'biometric_identification',
      status_verification: biometrics,
    });
  });

  it('a CPF can be given a liveness outcome: onboarded without a review, or refused', async () => {
    const approved = '52998224725';
    expect(
      (
        await control(sb.url, `/sandbox/documents/${approved}/liveness`, {
          outcome: 'approved_biometrics_pass',
        })
      ).body,
    ).toEqual({ cpf: approved, liveness: 'approved_biometrics_pass' });
    await start(approved);
    const done = await control(sb.url, '/sandbox/liveness/complete', { document: approved });
    expect(done.body.statusVerification).toBe('completed');
    expect((await callbacksFor(approved, 2)).map((c) => c.status_verification)).toEqual([
      'processing',
      'completed',
    ]);
    expect((await start(approved)).action.type).toBe('biometric_identification');

    const refused = '11144477735';
    await control(sb.url, `/sandbox/documents/${refused}/liveness`, { outcome: 'rejected_proof_of_life' });
    await start(refused);
    expect(
      (await control(sb.url, '/sandbox/liveness/complete', { document: refused })).body.statusVerification,
    ).toBe('failed');
    expect(
      (await control(sb.url, `/sandbox/documents/${refused}/liveness`, { outcome: 'nope' })).status,
    ).toBe(400);
  });

  it('answers the liveness error shapes', async () => {
    const token = await rawToken(sb.url);
    const cases = [
      ['12345678900', livenessInvalidDocumentErrorSchema, InvalidDocumentError],
      [testDocumentFor('not_found').cpf, livenessInvalidDocumentErrorSchema, InvalidDocumentError],
      [testDocumentFor('restricted').cpf, restrictDocumentErrorSchema, RestrictedDocumentError],
      [
        testDocumentFor('deceased_or_under_age_error').cpf,
        deceasedOrUnderAgeErrorSchema,
        DeceasedOrUnderAgeError,
      ],
      [testDocumentFor('titularfalecido').cpf, deceasedOrUnderAgeErrorSchema, DeceasedOrUnderAgeError],
      [testDocumentFor('under_18').cpf, deceasedOrUnderAgeErrorSchema, DeceasedOrUnderAgeError],
    ] as const;
    for (const [cpf, schema, Cls] of cases) {
      const res = await fetch(`${sb.url}/kyc-liveness/${cpf}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: token },
        body: JSON.stringify({ correlation_id: 'e', plan: 'plan_basic', event: 'x' }),
      });
      expect(res.status, cpf).toBe(400);
      expect(schema.safeParse(await res.json()).success, cpf).toBe(true);
      await expect(start(cpf)).rejects.toBeInstanceOf(Cls);
    }
  });

  it('every record-returning KYC document gets a liveness kyc object', async () => {
    for (const k of [
      'regular',
      'pendente_regularizacao',
      'suspenso',
      'cancelado',
      'null_status',
      'pep',
    ] as const) {
      const r = await start(testDocumentFor(k).cpf);
      expect(livenessResponseSchema.safeParse(r).success).toBe(true);
      if (k === 'null_status') expect(r.kyc.status).toBeNull();
      else expect(r.kyc.status).toBe(r.kyc.status?.toUpperCase());
      expect(r.kyc.is_pep).toBe(k === 'pep');
    }
  });
});
