import { randomUUID } from 'node:crypto';
import { generate as generateCpf } from '@fnando/cpf';
import { WorkflowNotFoundError, WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpfHash } from '../../common/pii';
import {
  type BiometricProgress,
  biometricLinkUpdate,
  biometricProgressSignal,
  biometricsStateQuery,
  biometricsWorkflowId,
} from '../../contracts/biometrics';
import { type FlowEnv, startFlowEnv, TEST_PII_KEY } from '../helpers/flow-env';
import { recordHistory } from '../helpers/histories';
import { expectActivityFailure } from '../helpers/sdk-log';

// Biometric identification on the time-skipping server, with the real activities against the
// sandbox. The sandbox sends its callbacks nowhere here: each test signals what it would send.

const PASSES = '73628883504'; // onboarding completed; every biometric identification completed
const FAILS = '41036021718'; // onboarding completed; every biometric identification failed
let f: FlowEnv;
let seq = 0;

beforeAll(async () => {
  f = await startFlowEnv();
  // The provider counts them as onboarded once their onboarding session is completed.
  for (const cpf of [PASSES, FAILS]) {
    await f.provider.startLiveness(cpf, { correlationId: randomUUID(), plan: 'plan_basic', event: 'signup' });
    await f.sandboxControl('/sandbox/liveness/complete', { document: cpf });
  }
});
afterAll(async () => {
  await f?.close();
});

function start(cpf: string) {
  // Several runs per CPF across tests: a suffix keeps their ids apart.
  return f.env.client.workflow.start('biometricsWorkflow', {
    taskQueue: f.taskQueue,
    workflowId: `${biometricsWorkflowId(cpfHash(cpf, TEST_PII_KEY))}-${++seq}`,
    args: [{ cpf, plan: 'plan_basic', event: 'biometric_identification' }],
  });
}

interface SandboxSession {
  document: string;
  actionType: string;
  correlationId: string;
  transactionId: string;
  statusOnboarding: string;
  statusVerification: BiometricProgress['statusVerification'];
  createdAtMs: number;
}

/** The callback the sandbox sends for the document's latest session, as the ingress signals it. */
async function callbackOf(cpf: string): Promise<BiometricProgress> {
  const res = await fetch(`${f.sandbox.url}/sandbox/state`);
  const { liveness } = (await res.json()) as { liveness: SandboxSession[] };
  const s = liveness.filter((l) => l.document === cpf).sort((a, b) => b.createdAtMs - a.createdAtMs)[0];
  if (!s) throw new Error(`no session for ${cpf}`);
  return {
    statusVerification: s.statusVerification,
    statusOnboarding: s.statusOnboarding,
    actionType: s.actionType as BiometricProgress['actionType'],
    transactionId: s.transactionId,
    correlationId: s.correlationId,
  };
}

const rowOf = async (workflowId: string) =>
  (
    await f.pool.query(
      'SELECT cpf_hash, link_issued_at, outcome, reason, finished_at FROM biometric_identifications WHERE workflow_id = $1',
      [workflowId],
    )
  ).rows;

describe('biometric identification', () => {
  it("passes with the provider's completed outcome; the link is handed out again while it runs", async () => {
    const handle = await start(PASSES);
    const first = await handle.executeUpdate(biometricLinkUpdate);
    expect(first.reused).toBe(false);
    expect(first.link.type).toBe('biometric_identification');
    expect(new Date(first.link.expiresAt).getTime() - new Date(first.link.issuedAt).getTime()).toBe(
      30 * 60_000,
    );
    expect(await handle.executeUpdate(biometricLinkUpdate)).toEqual({ link: first.link, reused: true });
    expect((await handle.query(biometricsStateQuery)).status).toBe('awaiting_identification');

    // A callback of another request (another correlation and transaction) decides nothing.
    await f.sandboxControl('/sandbox/liveness/complete', { document: PASSES });
    const callback = await callbackOf(PASSES);
    expect(callback).toMatchObject({
      statusVerification: 'completed',
      statusOnboarding: 'biometric_approved',
    });
    await handle.signal(biometricProgressSignal, {
      ...callback,
      correlationId: randomUUID(),
      transactionId: randomUUID(),
    });
    expect((await handle.query(biometricsStateQuery)).status).toBe('awaiting_identification');

    await handle.signal(biometricProgressSignal, callback);
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'passed', livenessStatus: 'completed' });
    const rows = await rowOf(handle.workflowId);
    expect(rows).toEqual([
      expect.objectContaining({ cpf_hash: cpfHash(PASSES, TEST_PII_KEY), outcome: 'passed', reason: null }),
    ]);
    expect(rows[0].link_issued_at.toISOString()).toBe(first.link.issuedAt);
    const flow = await f.pool.query('SELECT type, status, business_id FROM flows WHERE workflow_id = $1', [
      handle.workflowId,
    ]);
    expect(flow.rows).toEqual([
      { type: 'biometrics', status: 'passed', business_id: cpfHash(PASSES, TEST_PII_KEY) },
    ]);
    // Finished: no link any more (the API starts a new identification instead).
    await expect(handle.executeUpdate(biometricLinkUpdate)).rejects.toBeInstanceOf(WorkflowNotFoundError);
    await recordHistory(handle, 'biometrics-passed');
  });

  it("fails with the provider's failed outcome", async () => {
    const handle = await start(FAILS);
    await handle.executeUpdate(biometricLinkUpdate);
    await f.sandboxControl('/sandbox/liveness/complete', { document: FAILS });
    const callback = await callbackOf(FAILS);
    expect(callback).toMatchObject({ statusVerification: 'failed', statusOnboarding: 'biometric_failed' });
    await handle.signal(biometricProgressSignal, callback);
    // A late copy of an earlier stage, as the provider's retries deliver them out of order.
    await handle.signal(biometricProgressSignal, { ...callback, statusVerification: 'processing' });
    expect(await handle.result()).toMatchObject({
      status: 'failed',
      reason: 'liveness_failed',
      livenessStatus: 'failed',
    });
    expect(await rowOf(handle.workflowId)).toEqual([expect.objectContaining({ outcome: 'failed' })]);
    await recordHistory(handle, 'biometrics-failed');
  });

  it('reuses the link at 29 minutes and ends expired at 30 without an outcome', async () => {
    await f.syncSandboxClock();
    const handle = await start(PASSES);
    const first = await handle.executeUpdate(biometricLinkUpdate);
    await f.env.sleep('29 minutes');
    expect(await handle.executeUpdate(biometricLinkUpdate)).toEqual({ link: first.link, reused: true });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'expired', reason: 'no_outcome_before_link_expiry' });
    expect(new Date(String(result.finishedAt)).getTime()).toBeGreaterThanOrEqual(
      new Date(first.link.expiresAt).getTime(),
    );
    expect(await rowOf(handle.workflowId)).toEqual([expect.objectContaining({ outcome: 'expired' })]);
    await recordHistory(handle, 'biometrics-expired');
    await f.syncSandboxClock();
  });

  it('is unavailable when the provider does not count the person as onboarded', async () => {
    const cpf = generateCpf();
    const refused = expectActivityFailure({
      workflowId: `${biometricsWorkflowId(cpfHash(cpf, TEST_PII_KEY))}-${seq + 1}`,
      activityType: 'requestBiometricLink',
      error: /link of type onboarding/,
    });
    const handle = await start(cpf);
    const err = await handle.executeUpdate(biometricLinkUpdate).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
    expect(await handle.result()).toMatchObject({
      status: 'unavailable',
      reason: 'not_onboarded_at_provider',
    });
    expect(await rowOf(handle.workflowId)).toEqual([
      expect.objectContaining({ outcome: 'unavailable', link_issued_at: null }),
    ]);
    expect(refused()).toHaveLength(1);
  });
});
