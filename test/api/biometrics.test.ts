import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { biometricsResponseSchema } from '../../api/biometrics-schemas';
import { livenessLinkResponseSchema } from '../../api/onboardings-schemas';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { biometricsStateQuery, biometricsWorkflowId } from '../../contracts/biometrics';
import { type OnboardingState, onboardingWorkflowId } from '../../contracts/onboarding';
import { expectActivityFailure } from '../helpers/sdk-log';
import {
  type ApiEnv,
  counterValue,
  eventually,
  expectProblem,
  freshCpf,
  inboxOf,
  json,
  livenessCallback,
  PII_KEY,
  postLiveness,
  startApiEnv,
} from './support';

// Biometric identification end to end: the API, the worker, the sandbox's callbacks through the
// webhook ingress, Temporal and Postgres.

const PASSES = '73628883504'; // onboarding completed; every biometric identification completed
const FAILS = '41036021718'; // onboarding completed; every biometric identification failed
const LINK_TTL_MS = 5_000;

let e: ApiEnv;

beforeAll(async () => {
  // A short link lifetime (the test-only timings override) lets the expiry happen in the test.
  // The inbox relay runs as in the API process; a callback naming no request waits 1.5 s for one.
  e = await startApiEnv(
    { livenessLinkTtlMs: LINK_TTL_MS },
    { inboxRelay: true, env: { INBOX_LIVENESS_REQUEST_WAIT_MS: '1500' } },
  );
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/dev-webhook-secret-change-me`,
    partnerId: 'pixflow',
  });
});
afterAll(async () => {
  await e?.close();
});

type Link = ReturnType<typeof livenessLinkResponseSchema.parse>;

const onboardingOf = async (cpf: string) =>
  (await json<{ state: OnboardingState }>(await e.call('GET', `/v1/onboardings/${cpf}`))).state;

const biometricsOf = async (cpf: string) => {
  const res = await e.call('GET', `/v1/biometrics/${cpf}`);
  expect(res.status).toBe(200);
  return biometricsResponseSchema.strict().parse(await res.json());
};

const askLink = async (cpf: string): Promise<Link> => {
  const res = await e.call('POST', `/v1/onboardings/${cpf}/liveness-link`);
  expect(res.status).toBe(200);
  return livenessLinkResponseSchema.strict().parse(await res.json());
};

/**
 * Onboards a test document that completes without review: its liveness, completed in the sandbox,
 * reaches the onboarding through the ingress and approves it. (The dev server outlives this file:
 * an onboarding approved by an earlier run is onboarded at this sandbox again.)
 */
async function onboard(cpf: string) {
  const res = await e.call('POST', '/v1/onboardings', { body: { cpf, plan: 'plan_basic', event: 'signup' } });
  expect([200, 201]).toContain(res.status);
  const state = await eventually(
    () => onboardingOf(cpf),
    (s) => s.status === 'awaiting_liveness' || s.status === 'approved',
  );
  if (state.status === 'approved') {
    await e.provider.startLiveness(cpf, {
      correlationId: crypto.randomUUID(),
      plan: 'plan_basic',
      event: 'signup',
    });
  }
  await e.sandboxControl('/sandbox/liveness/complete', { document: cpf });
  await eventually(
    () => onboardingOf(cpf),
    (s) => s.status === 'approved',
  );
}

const rowsOf = async (cpf: string) =>
  (
    await e.pool.query(
      'SELECT run_id, outcome, link_issued_at FROM biometric_identifications WHERE cpf_hash = $1 ORDER BY created_at',
      [cpfHash(cpf, PII_KEY)],
    )
  ).rows as { run_id: string; outcome: string | null; link_issued_at: Date | null }[];

describe('biometric identification', () => {
  it('an approved person gets a biometric identification link; completed in the sandbox, it passes', async () => {
    await onboard(PASSES);
    const before = (await rowsOf(PASSES)).length;
    const link = await askLink(PASSES);
    const workflowId = biometricsWorkflowId(cpfHash(PASSES, PII_KEY));
    expect(link).toMatchObject({ type: 'biometric_identification', reused: false, workflowId });
    expect(link.qrcode).toMatch(/^data:image\/png;base64,/);
    expect((await biometricsOf(PASSES)).state.status).toBe('awaiting_identification');

    await e.sandboxControl('/sandbox/liveness/complete', { document: PASSES });
    const done = await eventually(
      () => biometricsOf(PASSES),
      (b) => b.state.status === 'passed',
    );
    expect(done).toMatchObject({
      workflowId,
      state: { livenessStatus: 'completed', link: { url: link.url } },
    });
    // Once its run has closed, it is read from what the run returned, asking no worker: the
    // state its query gives (the link without its QR image).
    const handle = e.temporal.workflow.getHandle(workflowId);
    await handle.result();
    const { link: queriedLink, ...queried } = await handle.query(biometricsStateQuery);
    const { qrcode: _qrcode, ...linkView } = queriedLink ?? { qrcode: undefined };
    expect(await biometricsOf(PASSES)).toEqual({ workflowId, state: { ...queried, link: linkView } });
    const rows = await rowsOf(PASSES);
    expect(rows).toHaveLength(before + 1);
    expect(rows.at(-1)).toMatchObject({ outcome: 'passed', link_issued_at: new Date(link.issuedAt) });
    // The person's record shows it as their last identification.
    const customer = await json<{ lastBiometric: { outcome: string; at: string } | null }>(
      await e.call('GET', `/v1/customers/${PASSES}`),
    );
    expect(customer.lastBiometric).toMatchObject({ outcome: 'passed' });
    const flows = await json<{ items: { workflowId: string; type: string; status: string }[] }>(
      await e.call('GET', `/v1/flows?type=biometrics&cpf=${PASSES}`),
    );
    expect(flows.items).toEqual([
      expect.objectContaining({ workflowId, type: 'biometrics', status: 'passed' }),
    ]);

    // The next ask is a new identification: a new run, and its flows row replaces the last one's.
    const next = await askLink(PASSES);
    expect(next).toMatchObject({ type: 'biometric_identification', reused: false, workflowId });
    expect(new Date(next.issuedAt).getTime()).toBeGreaterThan(new Date(link.issuedAt).getTime());
    await eventually(
      async () =>
        (await json<typeof flows>(await e.call('GET', `/v1/flows?type=biometrics&cpf=${PASSES}`))).items,
      (items) => items.length === 1 && items[0]?.status === 'awaiting_identification',
    );
  });

  it('fails for the document whose identification always fails', async () => {
    await onboard(FAILS);
    const link = await askLink(FAILS);
    expect(link.type).toBe('biometric_identification');
    await e.sandboxControl('/sandbox/liveness/complete', { document: FAILS });
    const done = await eventually(
      () => biometricsOf(FAILS),
      (b) => b.state.status !== 'awaiting_identification',
    );
    expect(done.state).toMatchObject({ status: 'failed', reason: 'liveness_failed' });
    expect((await rowsOf(FAILS)).at(-1)?.outcome).toBe('failed');
    const customer = await json<{ lastBiometric: { outcome: string } | null }>(
      await e.call('GET', `/v1/customers/${FAILS}`),
    );
    expect(customer.lastBiometric).toMatchObject({ outcome: 'failed' });
  });

  it('hands out the same link within its lifetime, ends expired without an outcome, then gives a new one', async () => {
    await onboard(PASSES);
    // Whatever an earlier test left open has expired by now or is finished here.
    await eventually(
      () => biometricsOf(PASSES),
      (b) => b.state.status !== 'awaiting_identification' && b.state.status !== 'issuing_link',
      { timeoutMs: LINK_TTL_MS * 3 },
    );
    const a = await askLink(PASSES);
    expect(a.reused).toBe(false);
    expect(await askLink(PASSES)).toEqual({ ...a, reused: true });
    expect(new Date(a.expiresAt).getTime() - new Date(a.issuedAt).getTime()).toBe(LINK_TTL_MS);

    const expired = await eventually(
      () => biometricsOf(PASSES),
      (b) => b.state.status === 'expired',
      { timeoutMs: LINK_TTL_MS * 3 },
    );
    expect(expired.state.reason).toBe('no_outcome_before_link_expiry');
    expect((await rowsOf(PASSES)).at(-1)).toMatchObject({ outcome: 'expired' });

    const b = await askLink(PASSES);
    expect(b.reused).toBe(false);
    expect(new Date(b.issuedAt).getTime()).toBeGreaterThan(new Date(a.expiresAt).getTime());
    expect((await askLink(PASSES)).reused).toBe(true);
  });

  it('refuses a link to a rejected onboarding (409) and to a person the provider has not onboarded (409)', async () => {
    const rejected = '17658774316'; // liveness fails at proof of life: rejected
    expect(
      (await e.call('POST', '/v1/onboardings', { body: { cpf: rejected, plan: 'plan_basic', event: 'x' } }))
        .status,
    ).toBe(201);
    await eventually(
      () => onboardingOf(rejected),
      (s) => s.status === 'awaiting_liveness',
    );
    await e.sandboxControl('/sandbox/liveness/complete', { document: rejected });
    await eventually(
      () => onboardingOf(rejected),
      (s) => s.status === 'rejected',
    );
    await expectProblem(
      await e.call('POST', `/v1/onboardings/${rejected}/liveness-link`),
      409,
      'flow-finished',
    );
    expect(await e.workflowExists(biometricsWorkflowId(cpfHash(rejected, PII_KEY)))).toBe(false);

    // Approved by an operator in pixflow, while the provider's review is still pending: the
    // provider would open a new onboarding, not a biometric identification.
    const cpf = freshCpf();
    expect(
      (await e.call('POST', '/v1/onboardings', { body: { cpf, plan: 'plan_basic', event: 'x' } })).status,
    ).toBe(201);
    await eventually(
      () => onboardingOf(cpf),
      (s) => s.status === 'awaiting_liveness',
    );
    await e.sandboxControl('/sandbox/liveness/complete', { document: cpf });
    await eventually(
      () => onboardingOf(cpf),
      (s) => s.status === 'awaiting_review',
    );
    const review = await e.call('POST', `/v1/onboardings/${cpf}/review`, {
      body: { decision: 'approve', by: 'op@example.com', reason: 'documents ok' },
    });
    expect(review.status).toBe(202);
    await eventually(
      () => onboardingOf(cpf),
      (s) => s.status === 'approved',
    );
    const refused = expectActivityFailure({
      workflowId: biometricsWorkflowId(cpfHash(cpf, PII_KEY)),
      activityType: 'requestBiometricLink',
      error: /link of type onboarding/,
    });
    const p = await expectProblem(
      await e.call('POST', `/v1/onboardings/${cpf}/liveness-link`),
      409,
      'biometrics-unavailable',
    );
    // The detail says what is missing, for whom, and what settles it; the CPF only masked.
    expect(p.detail).toContain(`The provider does not count ${maskCpf(cpf)} as onboarded`);
    expect(p.detail).toMatch(/liveness review .* still manual_approve_pending/);
    expect(p.detail).toContain('POST /sandbox/liveness/review');
    expect(p.detail).toContain('Reason: not_onboarded_at_provider.');
    expect(p.detail).not.toContain(cpf);
    expect((await biometricsOf(cpf)).state).toMatchObject({ status: 'unavailable' });
    expect(refused()).toHaveLength(1);
  });

  it("a forged `completed` naming no request of the identification moves nothing (kept, noted, counted); the provider's own callback then passes it", async () => {
    const cpf = freshCpf();
    await e.sandboxControl(`/sandbox/documents/${cpf}/liveness`, { outcome: 'approved_biometrics_pass' });
    await onboard(cpf);
    const link = await askLink(cpf);
    const hash = cpfHash(cpf, PII_KEY);
    const workflowId = biometricsWorkflowId(hash);
    const counted = () => counterValue(e, 'pixflow_ingress_liveness_unmatched_total', { flow: 'biometrics' });
    const before = await counted();

    // Ids of no request at all; then those of the person's onboarding, a request of another flow.
    const onboardingIds = JSON.parse(String((await inboxOf(e, onboardingWorkflowId(hash))).at(-1)?.raw_body));
    const forged = [
      { transaction_id: randomUUID(), correlation_id: randomUUID() },
      { transaction_id: onboardingIds.transaction_id, correlation_id: onboardingIds.correlation_id },
    ].map((ids) =>
      livenessCallback(e, cpf, ids, {
        status_onboarding: 'biometric_approved',
        action_type: 'biometric_identification',
      }),
    );
    for (const body of forged) expect(await postLiveness(e, body)).toBe(200);
    const rows = await eventually(
      () => inboxOf(e, workflowId),
      (r) => r.length === 2 && r.every((x) => x.delivered_at != null),
    );
    for (const row of rows) {
      expect(row.last_error).toMatch(/not signalled: it names no liveness request pixflow made/);
    }
    expect(await counted()).toBe(before + 2);
    expect((await biometricsOf(cpf)).state).toMatchObject({ status: 'awaiting_identification' });

    // The person does the identification: the provider's callbacks name the request, and pass.
    await e.sandboxControl('/sandbox/liveness/complete', { document: cpf });
    const done = await eventually(
      () => biometricsOf(cpf),
      (b) => b.state.status === 'passed',
    );
    expect(done.state).toMatchObject({ livenessStatus: 'completed', link: { url: link.url } });
    const genuine = (await inboxOf(e, workflowId)).slice(2);
    expect(genuine.map((r) => JSON.parse(r.raw_body).status_verification).sort()).toEqual([
      'completed',
      'processing',
    ]);
    expect(genuine.every((r) => r.delivered_at !== null && r.last_error === null)).toBe(true);
  });

  it('GET /v1/biometrics/:cpf is 404 for a person never identified and 400 for a bad CPF', async () => {
    await expectProblem(await e.call('GET', `/v1/biometrics/${freshCpf()}`), 404, 'flow-not-found');
    const p = await expectProblem(await e.call('GET', '/v1/biometrics/123'), 400);
    expect(p.invalid_params?.[0]?.name).toBe('path.cpf');
  });
});
