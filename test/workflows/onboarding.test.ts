import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { IdentityPaymentsConnector } from '../../connectors/identity-payments';
import {
  livenessLinkUpdate,
  livenessProgressSignal,
  type OnboardingInput,
  onboardingStateQuery,
  onboardingWorkflowId,
  reviewSignal,
} from '../../contracts/onboarding';
import { provenDecision } from '../helpers/decisions';
import { type FlowEnv, onOwnWorker, startFlowEnv, waitForState } from '../helpers/flow-env';
import { patchMarkers, recordHistory } from '../helpers/histories';

// Onboarding on the time-skipping server, with the real activities against the sandbox.

const DEFAULT_CPF = '63401825771'; // regular; liveness ends manual_approve_pending
let f: FlowEnv;
let seq = 0;
// Each run of this file (one per sandbox dialect, one Postgres) names its own flows.
const RUN = randomUUID().slice(0, 8);

beforeAll(async () => {
  f = await startFlowEnv();
});
afterAll(async () => {
  await f?.close();
});

function start(cpf: string, extra: Partial<OnboardingInput> = {}) {
  // Same CPF in several tests: a suffix keeps workflow ids apart (the API uses onboarding-<cpf>).
  return f.env.client.workflow.start('onboardingWorkflow', {
    taskQueue: f.taskQueue,
    workflowId: `${onboardingWorkflowId(cpf)}-${RUN}-${++seq}`,
    args: [{ cpf, plan: 'plan_standard', event: 'signup', redirectUrl: '/done', ...extra }],
  });
}

async function awaitingLiveness(cpf: string, extra: Partial<OnboardingInput> = {}) {
  const handle = await start(cpf, extra);
  await waitForState(
    () => handle.query(onboardingStateQuery),
    (s) => s.status === 'awaiting_liveness',
  );
  return handle;
}

const livenessCalls = async () => {
  const res = await fetch(`${f.sandbox.url}/sandbox/state`);
  const body = (await res.json()) as { counters: { requests: Record<string, number> } };
  return body.counters.requests.liveness ?? 0;
};

describe('KYC outcomes', () => {
  const rejected: Array<[string, string, string[]]> = [
    ['pendente_regularizacao', '31023307111', ['kyc_status_pendente_regularizacao']],
    ['suspenso', '30281362874', ['kyc_status_suspenso']],
    ['cancelado', '73071172079', ['kyc_status_cancelado']],
    ['null status', '27735381379', ['kyc_status_null']],
    ['titularfalecido', '82334053376', ['kyc_status_titularfalecido', 'deceased']],
    ['consta_lista_restritiva (400 RESTRICT_DOCUMENT)', '78642562609', ['restricted_document']],
    ['regular but under 18', '35656536718', ['under_18']],
    ['400 deceased or under age', '77858374060', ['deceased_or_under_age']],
    ['400 document not found', '05111861181', ['document_not_found']],
    ['invalid check digits (no provider call)', '12345678900', ['invalid_document']],
  ];
  for (const [name, cpf, reasons] of rejected) {
    it(`${name} ends rejected with ${reasons.join(', ')}`, async () => {
      const handle = await start(cpf);
      const result = await handle.result();
      expect(result.status).toBe('rejected');
      expect(result.reasons).toEqual(reasons);
      expect(result.link).toBeUndefined();
      if (cpf === '30281362874') await recordHistory(handle, 'onboarding-kyc-rejected');
    });
  }

  it('a regular holder passes to liveness; the full KYC record is in Postgres, not in the state', async () => {
    const handle = await awaitingLiveness(DEFAULT_CPF);
    const state = await handle.query(onboardingStateQuery);
    expect(state.flags.pep).toBe(false);
    expect(state.link?.url).toMatch(/^http/);
    expect(JSON.stringify(state)).not.toContain(DEFAULT_CPF);
    const { rows } = await f.pool.query('SELECT record FROM kyc_records WHERE workflow_id = $1', [
      handle.workflowId,
    ]);
    // The registry's record as the provider sent it: its status in whichever letter case it uses.
    expect(rows[0].record).toMatchObject({ cpf: DEFAULT_CPF, status: expect.stringMatching(/^regular$/i) });
    expect(rows[0].record).toHaveProperty('birth_date'); // plan_standard fields
  });

  it('a PEP holder passes with the pep flag', async () => {
    const handle = await awaitingLiveness('53868402586');
    expect((await handle.query(onboardingStateQuery)).flags.pep).toBe(true);
  });
});

describe('liveness link reuse', () => {
  it('is new to the first ask, reused at 29 minutes and renewed at 31', async () => {
    await f.syncSandboxClock();
    const handle = await awaitingLiveness(DEFAULT_CPF);
    const issued = (await handle.query(onboardingStateQuery)).link;
    // The flow issued the link right after KYC, but no one was given it yet.
    const first = await handle.executeUpdate(livenessLinkUpdate);
    expect(first).toEqual({ link: issued, reused: false });
    const callsAtStart = await livenessCalls();

    await f.env.sleep('29 minutes');
    await f.syncSandboxClock();
    const at29 = await handle.executeUpdate(livenessLinkUpdate);
    expect(at29).toEqual({ link: first.link, reused: true });
    expect(await livenessCalls()).toBe(callsAtStart);

    await f.env.sleep('2 minutes');
    await f.syncSandboxClock();
    const at31 = await handle.executeUpdate(livenessLinkUpdate);
    expect(at31.reused).toBe(false);
    expect(at31.link.url).not.toBe(first.link.url);
    expect(new Date(at31.link.expiresAt).getTime() - new Date(at31.link.issuedAt).getTime()).toBe(
      30 * 60_000,
    );
    expect(await livenessCalls()).toBe(callsAtStart + 1);
    // The renewed link was handed out by the ask that renewed it: asked again, it is reused.
    expect(await handle.executeUpdate(livenessLinkUpdate)).toEqual({ link: at31.link, reused: true });
    await handle.signal(livenessProgressSignal, { statusVerification: 'completed' });
    expect((await handle.result()).status).toBe('approved');
    await recordHistory(handle, 'onboarding-link-renewed');
  });

  it('is renewed once the user completed the process, and concurrent asks cause one provider call', async () => {
    const cpf = '36862870300'; // any other valid CPF: regular, ends manual_approve_pending
    const handle = await awaitingLiveness(cpf);
    const before = (await handle.executeUpdate(livenessLinkUpdate)).link;
    await f.sandboxControl('/sandbox/liveness/complete', { document: cpf });
    await handle.signal(livenessProgressSignal, { statusVerification: 'manual_approve_pending' });
    await waitForState(
      () => handle.query(onboardingStateQuery),
      (s) => s.status === 'awaiting_review',
    );
    const calls = await livenessCalls();
    const answers = await Promise.all([1, 2, 3].map(() => handle.executeUpdate(livenessLinkUpdate)));
    for (const a of answers) {
      expect(a.reused).toBe(false);
      expect(a.link).toEqual(answers[0]?.link);
    }
    expect(answers[0]?.link.url).not.toBe(before.url);
    expect(await livenessCalls()).toBe(calls + 1);
  });
});

describe('liveness progress and review', () => {
  it('completed ends approved', async () => {
    const handle = await awaitingLiveness('73628883504');
    await handle.signal(livenessProgressSignal, { statusVerification: 'processing' });
    await handle.signal(livenessProgressSignal, { statusVerification: 'completed' });
    expect(await handle.result()).toMatchObject({ status: 'approved', reasons: [] });
  });

  it('progress naming a request this onboarding did not make decides nothing; naming its own, it does', async () => {
    const handle = await awaitingLiveness('73628883504');
    const { rows } = await f.pool.query<{ correlation_id: string; transaction_id: string; flow: string }>(
      'SELECT correlation_id, transaction_id, flow FROM liveness_requests WHERE workflow_id = $1',
      [handle.workflowId],
    );
    expect(rows).toEqual([
      expect.objectContaining({ flow: 'onboarding', transaction_id: expect.any(String) }),
    ]);
    const ours = rows[0] as (typeof rows)[number];
    await handle.signal(livenessProgressSignal, {
      statusVerification: 'completed',
      correlationId: randomUUID(),
      transactionId: randomUUID(),
    });
    // Signals are handled in order: once `processing` shows, the `completed` before it was ignored.
    await handle.signal(livenessProgressSignal, {
      statusVerification: 'processing',
      correlationId: ours.correlation_id,
      transactionId: ours.transaction_id,
    });
    await waitForState(
      () => handle.query(onboardingStateQuery),
      (s) => s.livenessStatus === 'processing',
    );
    expect((await handle.query(onboardingStateQuery)).status).toBe('awaiting_liveness');
    // Its transaction_id alone names the request too.
    await handle.signal(livenessProgressSignal, {
      statusVerification: 'completed',
      correlationId: randomUUID(),
      transactionId: ours.transaction_id,
    });
    expect(await handle.result()).toMatchObject({ status: 'approved', livenessStatus: 'completed' });
  });

  it("a callback that overtakes the provider's answer to its request waits for that answer, then counts", async () => {
    const cpf = '73628883504';
    const workflowId = `${onboardingWorkflowId(cpf)}-${RUN}-${++seq}`;
    const handle = f.env.client.workflow.getHandle(workflowId);
    const provider: IdentityPaymentsConnector = {
      ...f.provider,
      async startLiveness(document, input) {
        const res = await f.provider.startLiveness(document, input);
        // Naming only the transaction_id the flow has not seen yet (the activity is still running).
        await handle.signal(livenessProgressSignal, {
          statusVerification: 'completed',
          correlationId: randomUUID(),
          transactionId: res.transactionId,
        });
        return res;
      },
    };
    await onOwnWorker(f, 'callback-first', { provider }, async (taskQueue) => {
      await f.env.client.workflow.start('onboardingWorkflow', {
        taskQueue,
        workflowId,
        args: [{ cpf, plan: 'plan_standard', event: 'signup' }],
      });
      expect(await handle.result()).toMatchObject({ status: 'approved', livenessStatus: 'completed' });
    });
  });

  it('failed ends rejected', async () => {
    const handle = await awaitingLiveness('25448320376');
    await handle.signal(livenessProgressSignal, { statusVerification: 'failed' });
    expect(await handle.result()).toMatchObject({ status: 'rejected', reasons: ['liveness_failed'] });
  });

  it('manual_refused ends rejected', async () => {
    const handle = await awaitingLiveness(DEFAULT_CPF);
    await handle.signal(livenessProgressSignal, { statusVerification: 'manual_approve_pending' });
    await handle.signal(livenessProgressSignal, { statusVerification: 'manual_refused' });
    expect(await handle.result()).toMatchObject({ status: 'rejected', reasons: ['liveness_refused'] });
  });

  for (const [decision, status] of [
    ['approve', 'approved'],
    ['refuse', 'rejected'],
  ] as const) {
    it(`an operator's review ${decision} ends ${status}, keeping who and why`, async () => {
      const handle = await awaitingLiveness(DEFAULT_CPF);
      // A review before the flow awaits one is ignored.
      await handle.signal(reviewSignal, { decision: 'approve', by: 'early@ops', reason: 'too soon' });
      await handle.signal(livenessProgressSignal, { statusVerification: 'manual_approve_pending' });
      await waitForState(
        () => handle.query(onboardingStateQuery),
        (s) => s.status === 'awaiting_review',
      );
      await handle.signal(
        reviewSignal,
        await provenDecision(f.pool, handle.workflowId, 'onboarding.review', 'ana@ops', {
          decision,
          by: 'ana@ops',
          reason: 'documents checked',
        }),
      );
      const result = await handle.result();
      expect(result.status).toBe(status);
      expect(result.review).toEqual({ decision, by: 'ana@ops', reason: 'documents checked' });
      expect(result.reasons).toEqual([`review_${decision}d`]);
      // Onboardings open before the check replay without it; this one took it.
      expect((await patchMarkers(handle)).join()).toContain('decision-proofs');
      await recordHistory(handle, `onboarding-review-${decision}-proven`);
    });
  }

  it('an abandoned onboarding ends expired at the deadline', async () => {
    const handle = await start(DEFAULT_CPF, { timings: { onboardingDeadlineMs: 2 * 3600_000 } });
    const result = await handle.result();
    expect(result.status).toBe('expired');
    expect(result.reasons).toEqual(['deadline_passed']);
    await recordHistory(handle, 'onboarding-expired');
    await expect(handle.executeUpdate(livenessLinkUpdate)).rejects.toThrow();
  });

  it('the flows table follows every state change', async () => {
    const handle = await start('30281362874');
    await handle.result();
    const { rows } = await f.pool.query(
      'SELECT type, business_id, status, cpf_masked, cpf_hash, reason FROM flows WHERE workflow_id = $1',
      [handle.workflowId],
    );
    expect(rows[0]).toMatchObject({ type: 'onboarding', status: 'rejected', cpf_masked: '***.813.628-**' });
    expect(rows[0].business_id).toBe(rows[0].cpf_hash); // never the CPF itself
    expect(rows[0].cpf_hash).toMatch(/^[0-9a-f]{32}$/);
  });
});
