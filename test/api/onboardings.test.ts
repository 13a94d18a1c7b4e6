import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { onboardingResponseSchema } from '../../api/onboardings-schemas';
import { cpfHash } from '../../common/pii';
import { biometricsWorkflowId } from '../../contracts/biometrics';
import {
  livenessProgressSignal,
  type OnboardingState,
  onboardingWorkflowId,
} from '../../contracts/onboarding';
import { sendLivenessCallbacksTo } from '../helpers/people';
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
  PNG_SIGNATURE,
  postLiveness,
  startApiEnv,
} from './support';

let e: ApiEnv;

const LINK_TTL_MS = 4_000;

beforeAll(async () => {
  // A short link validity (the test-only timings override) lets the renewal happen in the test.
  // The inbox relay runs as in the API process; a callback naming no request waits 1.5 s for one.
  e = await startApiEnv(
    { livenessLinkTtlMs: LINK_TTL_MS },
    { inboxRelay: true, env: { INBOX_LIVENESS_REQUEST_WAIT_MS: '1500' } },
  );
});
afterAll(async () => {
  await e?.close();
});

const body = (cpf: string) => ({ cpf, plan: 'plan_basic', event: 'signup', userRef: 'u-1' });

const stateOf = async (cpf: string) =>
  ((await (await e.call('GET', `/v1/onboardings/${cpf}`)).json()) as { state: OnboardingState }).state;

interface LinkAnswer {
  url: string;
  qrcode: string;
  type: string;
  issuedAt: string;
  expiresAt: string;
  reused: boolean;
}

describe('onboardings', () => {
  it('starts once per CPF (201, then 200), reviews to approved, then refuses a link (409)', async () => {
    const cpf = freshCpf();
    const res = await e.call('POST', '/v1/onboardings', { body: body(cpf) });
    expect(res.status).toBe(201);
    const first = (await res.json()) as { workflowId: string; state: OnboardingState };
    expect(first.workflowId).toBe(onboardingWorkflowId(cpfHash(cpf, PII_KEY)));
    expect(first.workflowId).not.toContain(cpf);
    expect(['kyc', 'awaiting_liveness']).toContain(first.state.status);

    const again = await e.call('POST', '/v1/onboardings', { body: body(cpf) });
    expect(again.status).toBe(200);
    expect((await json(again)).workflowId).toBe(first.workflowId);

    await eventually(
      () => stateOf(cpf),
      (s) => s.status === 'awaiting_liveness',
    );
    // Not awaiting review yet: the operator's decision is refused.
    await expectProblem(
      await e.call('POST', `/v1/onboardings/${cpf}/review`, {
        body: { decision: 'approve', by: 'op@example.com', reason: 'documents ok' },
      }),
      409,
      'not-awaiting-review',
    );

    // The liveness callback (normally through the ingress) puts it up for review.
    await e.temporal.workflow
      .getHandle(first.workflowId)
      .signal(livenessProgressSignal, { statusVerification: 'manual_approve_pending' });
    await eventually(
      () => stateOf(cpf),
      (s) => s.status === 'awaiting_review',
    );
    const review = await e.call('POST', `/v1/onboardings/${cpf}/review`, {
      body: { decision: 'approve', by: 'op@example.com', reason: 'documents ok' },
    });
    expect(review.status).toBe(202);
    // The answer is the decision as delivered, as the README and /openapi.json describe it.
    expect(await review.json()).toEqual({
      workflowId: first.workflowId,
      decision: 'approve',
      by: 'op@example.com',
      reason: 'documents ok',
    });
    const approved = await eventually(
      () => stateOf(cpf),
      (s) => s.status === 'approved',
    );
    expect(approved.review).toMatchObject({ decision: 'approve', by: 'op@example.com' });

    // Finished (and closed): the state is still served, no restart. A link now would be a
    // biometric identification, which the provider, still reviewing, does not offer yet.
    const refused = expectActivityFailure({
      workflowId: biometricsWorkflowId(cpfHash(cpf, PII_KEY)),
      activityType: 'requestBiometricLink',
      error: /link of type onboarding/,
    });
    await expectProblem(
      await e.call('POST', `/v1/onboardings/${cpf}/liveness-link`),
      409,
      'biometrics-unavailable',
    );
    expect(refused()).toHaveLength(1);
    const repeat = await e.call('POST', '/v1/onboardings', { body: body(cpf) });
    expect(repeat.status).toBe(200);
    expect((await json(repeat)).state.status).toBe('approved');
  });

  it('hands out the same liveness link while it is valid, then a new one', async () => {
    const cpf = freshCpf();
    expect((await e.call('POST', '/v1/onboardings', { body: body(cpf) })).status).toBe(201);
    const link = async () => {
      const res = await e.call('POST', `/v1/onboardings/${cpf}/liveness-link`);
      expect(res.status).toBe(200);
      return (await res.json()) as LinkAnswer;
    };
    const a = await link();
    // The flow issued it after KYC, but this is the first time anyone asks: new to the caller.
    expect(a.reused).toBe(false);
    expect(a.url).toMatch(/^https?:\/\//);
    expect(a.qrcode).toMatch(/^data:image\/png;base64,/);
    expect(await link()).toEqual({ ...a, reused: true });
    expect(new Date(a.expiresAt).getTime() - new Date(a.issuedAt).getTime()).toBe(LINK_TTL_MS);
    await new Promise((r) => setTimeout(r, new Date(a.expiresAt).getTime() - Date.now() + 200));
    const b = await link();
    expect(b.reused).toBe(false);
    expect(new Date(b.issuedAt).getTime()).toBeGreaterThan(new Date(a.issuedAt).getTime());
    expect((await link()).reused).toBe(true);
  });

  it("state reads link to the liveness QR code's PNG instead of carrying the image", async () => {
    const cpf = freshCpf();
    expect((await e.call('POST', '/v1/onboardings', { body: body(cpf) })).status).toBe(201);
    await eventually(
      () => stateOf(cpf),
      (s) => s.status === 'awaiting_liveness',
    );
    const res = await e.call('GET', `/v1/onboardings/${cpf}`);
    const text = await res.text();
    expect(text).not.toContain('base64');
    const answer = onboardingResponseSchema.strict().parse(JSON.parse(text));
    const link = answer.state.link;
    expect(link).not.toHaveProperty('qrcode');
    expect(link?.qrcodeUrl).toBe(`/v1/onboardings/${cpf}/liveness-link/qrcode.png`);

    const png = await e.call('GET', String(link?.qrcodeUrl));
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    const bytes = Buffer.from(await png.arrayBuffer());
    expect(bytes.subarray(0, 8)).toEqual(PNG_SIGNATURE);
    // The same image the link's own answer carries as a data URL.
    const given = (await json<LinkAnswer>(await e.call('POST', `/v1/onboardings/${cpf}/liveness-link`)))
      .qrcode;
    expect(bytes.toString('base64')).toBe(given.replace('data:image/png;base64,', ''));

    // No link (KYC refused this holder), no image; no onboarding, no image.
    const refused = '30281362874';
    expect([200, 201]).toContain((await e.call('POST', '/v1/onboardings', { body: body(refused) })).status);
    await eventually(
      () => stateOf(refused),
      (s) => s.status === 'rejected',
    );
    await expectProblem(
      await e.call('GET', `/v1/onboardings/${refused}/liveness-link/qrcode.png`),
      404,
      'qrcode-not-found',
    );
    await expectProblem(
      await e.call('GET', `/v1/onboardings/${freshCpf()}/liveness-link/qrcode.png`),
      404,
      'flow-not-found',
    );
  });

  it('invalid bodies and paths are 400 naming the field and start nothing; unknown CPFs are 404', async () => {
    const p = await expectProblem(
      await e.call('POST', '/v1/onboardings', {
        body: { cpf: '12345678900', plan: 'plan_gold', event: 'x' },
      }),
      400,
      'validation-error',
    );
    expect(p.invalid_params?.map((i) => i.name).sort()).toEqual(['body.cpf', 'body.plan']);
    expect(await e.workflowExists(onboardingWorkflowId(cpfHash('12345678900', PII_KEY)))).toBe(false);

    await expectProblem(await e.call('POST', '/v1/onboardings', { body: 'not json' }), 400);
    const path = await expectProblem(await e.call('GET', '/v1/onboardings/123'), 400);
    expect(path.invalid_params?.[0]?.name).toBe('path.cpf');

    const unknown = freshCpf();
    await expectProblem(await e.call('GET', `/v1/onboardings/${unknown}`), 404, 'flow-not-found');
    await expectProblem(
      await e.call('POST', `/v1/onboardings/${unknown}/liveness-link`),
      404,
      'flow-not-found',
    );
    const review = await expectProblem(
      await e.call('POST', `/v1/onboardings/${unknown}/review`, { body: { decision: 'maybe' } }),
      400,
    );
    expect(review.invalid_params?.map((i) => i.name)).toContain('body.decision');
  });
});

describe('liveness callbacks through the webhook ingress', () => {
  it("a forged `completed` for the right CPF naming no request pixflow made moves nothing (kept, noted, counted); the provider's own callback then approves", async () => {
    const cpf = '73628883504'; // the sandbox completes its onboarding without a review
    await sendLivenessCallbacksTo(e.sandbox.url, e.ingress, e.partnerId);
    expect((await e.call('POST', '/v1/onboardings', { body: body(cpf) })).status).toBe(201);
    await eventually(
      () => stateOf(cpf),
      (s) => s.status === 'awaiting_liveness',
    );
    const workflowId = onboardingWorkflowId(cpfHash(cpf, PII_KEY));
    const counted = () => counterValue(e, 'pixflow_ingress_liveness_unmatched_total', { flow: 'onboarding' });
    const before = await counted();

    // Whoever learnt the webhook URL (secret and partner id) and the CPF, but not the request.
    const forged = livenessCallback(e, cpf, { transaction_id: randomUUID(), correlation_id: randomUUID() });
    expect(await postLiveness(e, forged)).toBe(200);
    const [row] = await eventually(
      () => inboxOf(e, workflowId),
      (rows) => rows[0]?.delivered_at != null,
    );
    expect(JSON.parse(String(row?.raw_body))).toEqual(forged);
    expect(row?.last_error).toMatch(/not signalled: it names no liveness request pixflow made/);
    expect(await counted()).toBe(before + 1);
    const state = await stateOf(cpf);
    expect(state.status).toBe('awaiting_liveness');
    expect(state.livenessStatus).toBeUndefined();

    // The person does the liveness: the provider's callbacks name the request, and approve.
    await e.sandboxControl('/sandbox/liveness/complete', { document: cpf });
    const approved = await eventually(
      () => stateOf(cpf),
      (s) => s.status === 'approved',
    );
    expect(approved.livenessStatus).toBe('completed');
    const rows = await inboxOf(e, workflowId);
    const genuine = rows.filter((r) => r.id !== row?.id);
    expect(genuine.map((r) => JSON.parse(r.raw_body).status_verification).sort()).toEqual([
      'completed',
      'processing',
    ]);
    expect(genuine.every((r) => r.delivered_at !== null && r.last_error === null)).toBe(true);
    expect(await counted()).toBe(before + 1);
  });
});
