import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withdrawalStateQuery, withdrawalWorkflowId } from '../../contracts/withdrawal';
import { historyBytes } from '../helpers/histories';
import { expectSdkLog } from '../helpers/sdk-log';
import {
  type ApiEnv,
  eventually,
  expectProblem,
  freshCpf,
  json,
  onboardApproved,
  PNG_SIGNATURE,
  startApiEnv,
} from './support';

let e: ApiEnv;
let n = 0;
// A verified person, paid to their own CPF key: what the money rules let through at once.
const PERSON = freshCpf();

beforeAll(async () => {
  // Reconciliation every second: a settled withdrawal completes without a webhook.
  e = await startApiEnv({ pollScheduleMs: [1_000] });
  await onboardApproved(e, PERSON);
});
afterAll(async () => {
  await e?.close();
});

const withdrawalBody = (over: Record<string, unknown> = {}) => ({
  transactionId: `api-wd-${Date.now()}-${++n}`,
  client: { externalId: `user-${n}`, cpf: PERSON, email: 'ana@example.com', name: 'Ana Souza' },
  pixKey: PERSON,
  pixType: 'CPF',
  amountCentavos: 25_050,
  ...over,
});

describe('withdrawals', () => {
  /** A withdrawal asked for and sent: the provider is processing it. */
  const sentAndProcessing = async () => {
    const body = withdrawalBody();
    expect((await e.call('POST', '/v1/withdrawals', { body })).status).toBe(202);
    const path = `/v1/withdrawals/${body.transactionId}`;
    await eventually(
      async () => (await json(await e.call('GET', path))).state.status,
      (s) => s === 'processing',
    );
    return { body, path };
  };

  it('202, idempotent per transactionId, 409 on another body; receipt 404 until settled, then a PNG', async () => {
    const body = withdrawalBody();
    const res = await e.call('POST', '/v1/withdrawals', { body });
    expect(res.status).toBe(202);
    const first = (await res.json()) as {
      workflowId: string;
      transactionId: string;
      state: { status: string };
    };
    expect(first.workflowId).toBe(withdrawalWorkflowId(body.transactionId));
    expect(first.transactionId).toBe(body.transactionId);

    const again = await e.call('POST', '/v1/withdrawals', { body });
    expect(again.status).toBe(202);
    expect((await json(again)).workflowId).toBe(first.workflowId);
    await expectProblem(
      await e.call('POST', '/v1/withdrawals', { body: { ...body, amountCentavos: 1 } }),
      409,
      'conflict',
    );

    // Running: not yet, and when to ask again.
    const receiptPath = `/v1/withdrawals/${body.transactionId}/receipt.png`;
    const notYet = await e.call('GET', receiptPath);
    expect(notYet.headers.get('retry-after')).toBe('5');
    const early = await expectProblem(notYet, 404, 'receipt-not-found');
    expect(early).toMatchObject({ flowStatus: expect.stringMatching(/^(validating|sending|processing)$/) });
    await eventually(
      async () => (await json(await e.call('GET', `/v1/withdrawals/${body.transactionId}`))).state.status,
      (s) => s === 'processing',
    );
    await e.sandboxControl(`/sandbox/withdrawals/${body.transactionId}/settle`);
    const done = await eventually(
      async () => (await json(await e.call('GET', `/v1/withdrawals/${body.transactionId}`))).state,
      (s) => s.status === 'completed',
    );
    expect(done).toMatchObject({ receiptStored: true, amountCentavos: 25_050 });
    const png = await e.call('GET', receiptPath);
    expect(png.status).toBe(200);
    expect(png.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await png.arrayBuffer()).subarray(0, 8)).toEqual(PNG_SIGNATURE);

    // Once its run has closed, it is read from what the run returned, asking no worker: the
    // state its query gives.
    const handle = e.temporal.workflow.getHandle(first.workflowId);
    await handle.result();
    expect(await json(await e.call('GET', `/v1/withdrawals/${body.transactionId}`))).toEqual({
      workflowId: first.workflowId,
      transactionId: body.transactionId,
      state: await handle.query(withdrawalStateQuery),
    });

    // Finished: the same request still answers the same flow, another one is still a conflict.
    const after = await e.call('POST', '/v1/withdrawals', { body });
    expect(after.status).toBe(202);
    expect((await json(after)).state.status).toBe('completed');
    await expectProblem(
      await e.call('POST', '/v1/withdrawals', { body: { ...body, amountCentavos: body.amountCentavos + 1 } }),
      409,
    );
  });

  it("a completed withdrawal's history, started as the API starts it, stays under 10 KB", async () => {
    const { body, path } = await sentAndProcessing();
    await e.sandboxControl(`/sandbox/withdrawals/${body.transactionId}/settle`);
    await eventually(
      async () => (await json(await e.call('GET', path))).state.status,
      (s) => s === 'completed',
    );
    const handle = e.temporal.workflow.getHandle(withdrawalWorkflowId(body.transactionId));
    // Rules, payout, outcome and receipt, with the search attributes and the update: within the
    // 8 KB goal. bench/ reports it under load.
    expect(await historyBytes(handle)).toBeLessThanOrEqual(8 * 1024);
  });

  it('a failed withdrawal says its receipt will never come (410 with its status and reason)', async () => {
    const { body, path } = await sentAndProcessing();
    await e.sandboxControl(`/sandbox/withdrawals/${body.transactionId}/fail`, { reason: 'account closed' });
    const failed = await eventually(
      async () => (await json(await e.call('GET', path))).state,
      (s) => s.status === 'failed',
    );
    const gone = await e.call('GET', `${path}/receipt.png`);
    expect(gone.headers.get('retry-after')).toBeNull();
    const p = await expectProblem(gone, 410, 'receipt-unavailable');
    expect(p).toMatchObject({ flowStatus: 'failed', reason: failed.reason });
    expect(p.detail).toContain('account closed');

    await expectProblem(await e.call('GET', '/v1/withdrawals/never-made/receipt.png'), 404, 'flow-not-found');
  });

  it('a refused withdrawal says why, and that its receipt will never come', async () => {
    const body = withdrawalBody({ client: { ...withdrawalBody().client, cpf: freshCpf() } });
    body.pixKey = body.client.cpf;
    // Refused in the flow's first step: 409 with the reason, the rules' version and the flow.
    const refused = await expectProblem(
      await e.call('POST', '/v1/withdrawals', { body }),
      409,
      'withdrawal-refused',
    );
    expect(refused).toMatchObject({
      reason: 'not_verified',
      policyVersion: 1,
      workflowId: `withdrawal-${body.transactionId}`,
      transactionId: body.transactionId,
      state: { status: 'refused', reason: 'not_verified', policyVersion: 1 },
    });
    // The flow keeps it: GET says the same, and the same request again is answered the same way.
    expect((await json(await e.call('GET', `/v1/withdrawals/${body.transactionId}`))).state).toMatchObject({
      status: 'refused',
      reason: 'not_verified',
      policyVersion: 1,
    });
    await expectProblem(await e.call('POST', '/v1/withdrawals', { body }), 409, 'withdrawal-refused');
    const p = await expectProblem(
      await e.call('GET', `/v1/withdrawals/${body.transactionId}/receipt.png`),
      410,
      'receipt-unavailable',
    );
    expect(p).toMatchObject({ flowStatus: 'refused', reason: 'not_verified' });
    await expectProblem(
      await e.call('GET', `/v1/withdrawals/${body.transactionId}/biometrics-link/qrcode.png`),
      404,
      'flow-not-found',
    );
  });

  it('a withdrawal whose run ended short of an outcome (an operator terminated it) has no receipt to wait for', async () => {
    const { body, path } = await sentAndProcessing();
    await expectProblem(await e.call('GET', `${path}/receipt.png`), 404, 'receipt-not-found');
    const handle = e.temporal.workflow.getHandle(withdrawalWorkflowId(body.transactionId));
    // Terminated between activities, as an operator would find it: an activity still running
    // would complete into a closed run, and the worker would warn about it after this file.
    await eventually(
      async () => (await handle.describe()).raw.pendingActivities?.length ?? 0,
      (n) => n === 0,
    );
    // A workflow task in flight when the run is terminated cannot be completed; the worker says so.
    expectSdkLog(({ message }) => /Task not found when completing/.test(message));
    await handle.terminate('operator');
    const p = await expectProblem(await e.call('GET', `${path}/receipt.png`), 410, 'receipt-unavailable');
    expect(p).toMatchObject({ flowStatus: 'processing', reason: 'its run is terminated' });
  });

  it('a flow no worker can answer for is a 503 with Retry-After, not an internal error', async () => {
    const id = `no-worker-${crypto.randomUUID()}`;
    // Its worker is down: nothing polls the task queue it runs on.
    await e.temporal.workflow.start('withdrawalWorkflow', {
      workflowId: withdrawalWorkflowId(id),
      taskQueue: `nobody-polls-${crypto.randomUUID()}`,
      args: [{}],
    });
    // The server holds a query for a task queue nobody ever polled until its deadline.
    const res = await e.call('GET', `/v1/withdrawals/${id}`);
    // The status and the body first: a failure then shows what was answered instead.
    await expectProblem(res, 503, 'unavailable');
    expect(res.headers.get('retry-after')).toBe('5');
    await e.temporal.workflow.getHandle(withdrawalWorkflowId(id)).terminate('test over');
  });

  it('without a transactionId one is generated', async () => {
    const { transactionId: _omit, ...body } = withdrawalBody();
    const res = await e.call('POST', '/v1/withdrawals', { body });
    expect(res.status).toBe(202);
    const { transactionId } = (await res.json()) as { transactionId: string };
    expect(transactionId).toMatch(/^[0-9a-f-]{36}$/);
    expect(await e.workflowExists(withdrawalWorkflowId(transactionId))).toBe(true);
  });

  it('invalid bodies (a key that does not fit its type) are 400 and start nothing', async () => {
    const body = withdrawalBody({ pixType: 'CPF', pixKey: 'not-a-cpf' });
    const p = await expectProblem(await e.call('POST', '/v1/withdrawals', { body }), 400, 'validation-error');
    expect(p.invalid_params?.map((i) => i.name)).toContain('body.pixKey');
    expect(await e.workflowExists(withdrawalWorkflowId(body.transactionId))).toBe(false);
    for (const pixKey of [
      ';60701190;0001;1234567;CACC',
      '!!garbage!!;60701190;0001;1234567;CACC',
      `${'a'.repeat(150)};60701190;0001;1234567;CACC`,
    ]) {
      const composite = withdrawalBody({ pixType: 'ACCOUNT', pixKey });
      const refused = await expectProblem(
        await e.call('POST', '/v1/withdrawals', { body: composite }),
        400,
        'validation-error',
      );
      expect(refused.invalid_params?.find((i) => i.name === 'body.pixKey')?.reason).toMatch(/key part/);
      expect(await e.workflowExists(withdrawalWorkflowId(composite.transactionId))).toBe(false);
    }
    await expectProblem(await e.call('GET', '/v1/withdrawals/no%20spaces'), 400);
    await expectProblem(await e.call('GET', '/v1/withdrawals/never-made'), 404, 'flow-not-found');
  });
});
