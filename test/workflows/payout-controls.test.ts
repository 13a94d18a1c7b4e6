import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generate as generateCpf } from '@fnando/cpf';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cpfHash } from '../../common/pii';
import { FlowStatusKey } from '../../common/search-attributes';
import { providerNotificationSignal } from '../../contracts/flow';
import {
  type PayoutAuthorizationRequest,
  payoutAuthorizationRequestSchema,
} from '../../contracts/payout-authorization';
import {
  type WithdrawalInput,
  type WithdrawalState,
  withdrawalStateQuery,
  withdrawalWorkflowId,
} from '../../contracts/withdrawal';
import type { Policy } from '../../policy/schema';
import { verifiedWithKnownPayee } from '../helpers/customers';
import { type FlowEnv, onOwnWorker, startFlowEnv, TEST_PII_KEY, waitForState } from '../helpers/flow-env';
import { recordHistory } from '../helpers/histories';
import { policyWith } from '../helpers/policy';
import { signedRequestOf } from '../helpers/webhook-receiver';

// The payout controls on the time-skipping server, with the real activities against the sandbox
// and Postgres: the deadline's marks at their times, and the operator's authorization over HTTP
// (a backend of the test's own that verifies each request as a real one would).

let f: FlowEnv;
let n = 0;

beforeAll(async () => {
  f = await startFlowEnv();
});
afterAll(async () => {
  await f?.close();
});

function withdrawalInput(over: Partial<WithdrawalInput> = {}): WithdrawalInput {
  n += 1;
  return {
    transactionId: `pc-${Date.now()}-${n}`,
    merchant: 'sandbox-merchant',
    client: { externalId: `user-${n}`, cpf: generateCpf(), email: 'ana@example.com', name: 'Ana Souza' },
    pixKey: 'ana@example.com',
    pixType: 'EMAIL',
    amountCentavos: 25_050,
    ...over,
  };
}

async function start(input: WithdrawalInput, taskQueue = f.taskQueue) {
  await verifiedWithKnownPayee(f.pool, TEST_PII_KEY, input);
  return f.env.client.workflow.start('withdrawalWorkflow', {
    taskQueue,
    workflowId: withdrawalWorkflowId(input.transactionId),
    args: [input],
  });
}

const payoutsSent = async (transactionId: string): Promise<number> => {
  const res = await fetch(`${f.sandbox.url}/sandbox/state`);
  return (
    ((await res.json()) as { counters: { payouts: Record<string, number> } }).counters.payouts[
      transactionId
    ] ?? 0
  );
};

const deadlineEvents = async (workflowId: string) =>
  (
    await f.pool.query(
      `SELECT type, data->'details' AS details FROM events
        WHERE stream_id = $1 AND type LIKE 'withdrawal.deadline_%' ORDER BY seq`,
      [workflowId],
    )
  ).rows as { type: string; details: Record<string, unknown> }[];

const rowOf = async (workflowId: string) =>
  (await f.pool.query('SELECT status, reason, details FROM flows WHERE workflow_id = $1', [workflowId]))
    .rows[0] as { status: string; reason: string | null; details: Record<string, unknown> };

const MINUTE = 60_000;

describe('the payout deadline', () => {
  it('a payout the provider never settles is at risk at 75% of 120 minutes, then missed at 120', async () => {
    const input = withdrawalInput();
    const handle = await start(input);
    const processing = await waitForState(
      () => handle.query(withdrawalStateQuery),
      (s) => s.status === 'processing',
    );
    const asked = Date.parse(processing.startedAt);
    expect(processing.deadline).toMatchObject({
      dueAt: new Date(asked + 120 * MINUTE).toISOString(),
      atRiskAt: new Date(asked + 90 * MINUTE).toISOString(),
      waitedForPersonMs: 0,
    });
    const markAfter = async (ms: number) => {
      await f.env.sleep(ms);
      return (await handle.query(withdrawalStateQuery)).deadline?.state;
    };

    // Just before each mark nothing; just after it, the mark, its row and its one event.
    expect(await markAfter(89 * MINUTE)).toBeUndefined();
    expect(await deadlineEvents(handle.workflowId)).toEqual([]);
    await markAfter(2 * MINUTE);
    await waitForState(
      () => deadlineEvents(handle.workflowId),
      (es) => es.length === 1,
    );
    expect((await handle.query(withdrawalStateQuery)).deadline?.state).toBe('at_risk');
    expect((await deadlineEvents(handle.workflowId))[0]).toMatchObject({
      type: 'withdrawal.deadline_at_risk',
      details: { deadlineState: 'at_risk', dueAt: processing.deadline?.dueAt },
    });
    expect(await rowOf(handle.workflowId)).toMatchObject({
      status: 'processing',
      details: { deadlineState: 'at_risk' },
    });

    expect(await markAfter(28 * MINUTE)).toBe('at_risk');
    await markAfter(2 * MINUTE);
    const marks = await waitForState(
      () => deadlineEvents(handle.workflowId),
      (es) => es.length === 2,
    );
    expect(marks.map((m) => m.type)).toEqual(['withdrawal.deadline_at_risk', 'withdrawal.deadline_missed']);
    expect(await rowOf(handle.workflowId)).toMatchObject({
      status: 'processing',
      details: { deadlineState: 'missed' },
    });

    // Settled late: completed, still missed, and no mark again.
    await f.sandboxControl(`/sandbox/withdrawals/${input.transactionId}/settle`);
    await handle.signal(providerNotificationSignal, {
      type: 'withdraw',
      action: 'updated',
      id: input.transactionId,
    });
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'completed', deadline: { state: 'missed' } });
    expect(await deadlineEvents(handle.workflowId)).toHaveLength(2);
    expect(await rowOf(handle.workflowId)).toMatchObject({
      status: 'completed',
      details: { deadlineState: 'missed' },
    });
    expect(await payoutsSent(input.transactionId)).toBe(1);
    await recordHistory(handle, 'withdrawal-deadline-missed');
  });

  it('a payout completed in time is never marked', async () => {
    const input = withdrawalInput();
    const handle = await start(input);
    await waitForState(
      () => handle.query(withdrawalStateQuery),
      (s) => s.status === 'processing',
    );
    await f.sandboxControl(`/sandbox/withdrawals/${input.transactionId}/settle`);
    await handle.signal(providerNotificationSignal, {
      type: 'withdraw',
      action: 'updated',
      id: input.transactionId,
    });
    const result = await handle.result();
    expect(result.status).toBe('completed');
    expect(result.deadline?.state).toBeUndefined();
    expect(await deadlineEvents(handle.workflowId)).toEqual([]);
  });
});

/** The operator's backend: verifies each request's signature, keeps it, answers as the test says. */
interface AuthorizationBackend {
  url: string;
  secret: string;
  received: { body: PayoutAuthorizationRequest; raw: string; verified: boolean; userAgent: string }[];
  answer: 'hang' | object;
  close(): Promise<void>;
}

async function startAuthorizationBackend(): Promise<AuthorizationBackend> {
  const secret = `whsec_${Buffer.from('payout-authorization-test-secret').toString('base64')}`;
  const hanging = new Set<http.ServerResponse>();
  const backend: AuthorizationBackend = {
    url: '',
    secret,
    received: [],
    answer: { decision: 'approve' },
    close: async () => {
      for (const res of hanging) res.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const server = http.createServer(async (req, res) => {
    const { raw, verifies } = await signedRequestOf(req);
    const verified = verifies(secret);
    backend.received.push({
      body: payoutAuthorizationRequestSchema.parse(JSON.parse(raw)),
      raw,
      verified,
      userAgent: String(req.headers['user-agent']),
    });
    if (backend.answer === 'hang') {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(backend.answer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  backend.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
  return backend;
}

/** The statuses the run showed in the Temporal UI (its PixflowFlowStatus search attribute), in order. */
async function statusesShown(handle: { fetchHistory(): Promise<temporal.api.history.v1.IHistory> }) {
  const { events } = await handle.fetchHistory();
  return (events ?? []).flatMap((e) => {
    const field =
      e.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.[FlowStatusKey.name];
    return field?.data ? [JSON.parse(Buffer.from(field.data).toString()) as string] : [];
  });
}

describe("the operator's authorization", () => {
  let backend: AuthorizationBackend;
  beforeAll(async () => {
    backend = await startAuthorizationBackend();
  });
  afterAll(async () => {
    await backend?.close();
  });

  /** Runs a withdrawal on a worker that asks the backend, to its end. */
  async function withdrawAsking(
    suffix: string,
    onNoAnswer: Policy['payouts']['authorizationOnNoAnswer'],
    answer: AuthorizationBackend['answer'],
  ): Promise<{
    input: WithdrawalInput;
    result: WithdrawalState;
    asked: AuthorizationBackend['received'];
    shown: string[];
  }> {
    backend.answer = answer;
    backend.received.length = 0;
    const input = withdrawalInput();
    let result: WithdrawalState | undefined;
    let shown: string[] = [];
    await onOwnWorker(
      f,
      suffix,
      {
        // What no answer means is the policy's; a worker that has the backend asks it.
        policy: policyWith({ payouts: { authorizationOnNoAnswer: onNoAnswer } }),
        // A backend that answers is given long enough on two loaded cores; one that hangs never
        // answers, so the short wait decides nothing but the test's length.
        payoutAuthorization: {
          url: backend.url,
          secret: backend.secret,
          timeoutMs: answer === 'hang' ? 300 : 10_000,
        },
      },
      async (taskQueue) => {
        const handle = await start(input, taskQueue);
        const state = await waitForState(
          () => handle.query(withdrawalStateQuery),
          (s) => s.status === 'processing' || s.status === 'refused',
        );
        if (state.status === 'processing') {
          await f.sandboxControl(`/sandbox/withdrawals/${input.transactionId}/settle`);
          await handle.signal(providerNotificationSignal, {
            type: 'withdraw',
            action: 'updated',
            id: input.transactionId,
          });
        }
        result = await handle.result();
        shown = await statusesShown(handle);
        if (suffix === 'denied') await recordHistory(handle, 'withdrawal-authorization-denied');
      },
    );
    return { input, result: result as WithdrawalState, asked: [...backend.received], shown };
  }

  it('approve: asked once with a signed request that names the person only masked and hashed; sent', async () => {
    const { input, result, asked } = await withdrawAsking('approve', 'deny', { decision: 'approve' });
    expect(result).toMatchObject({ status: 'completed', authorization: { decision: 'approve' } });
    expect(await payoutsSent(input.transactionId)).toBe(1);
    expect(asked).toHaveLength(1);
    const [request] = asked;
    expect(request?.verified).toBe(true);
    expect(request?.userAgent).toBe('pixflow-payout-authorization/1');
    expect(request?.body).toMatchObject({
      transactionId: input.transactionId,
      amountCentavos: input.amountCentavos,
      cpfHash: cpfHash(input.client.cpf, TEST_PII_KEY),
      cpfMasked: `***.${input.client.cpf.slice(3, 6)}.${input.client.cpf.slice(6, 9)}-**`,
      payee: { keyType: 'EMAIL', keyMasked: 'a***@example.com' },
    });
    expect(request?.raw).not.toContain(input.client.cpf);
  });

  it('deny: refused authorization_denied with the reason kept, nothing sent', async () => {
    const { input, result, shown } = await withdrawAsking('denied', 'deny', {
      decision: 'deny',
      reason: 'wallet balance too low',
    });
    expect(result).toMatchObject({
      status: 'refused',
      reason: 'authorization_denied',
      authorization: { decision: 'deny', reason: 'wallet balance too low' },
    });
    expect(await payoutsSent(input.transactionId)).toBe(0);
    // The backend is asked before `sending` is shown: a caller is never told `sending`, then `refused`.
    expect(shown).toEqual(['awaiting_authorization', 'refused']);
    expect(await rowOf(withdrawalWorkflowId(input.transactionId))).toMatchObject({
      status: 'refused',
      reason: 'authorization_denied',
      details: { authorization: { decision: 'deny', reason: 'wallet balance too low' } },
    });
  });

  it('no answer, failing closed: three attempts, then refused authorization_unavailable, nothing sent', async () => {
    const { input, result, asked } = await withdrawAsking('unavailable', 'deny', 'hang');
    expect(result).toMatchObject({
      status: 'refused',
      reason: 'authorization_unavailable',
      authorization: { decision: 'no_answer', reason: expect.stringMatching(/no answer within 300 ms/) },
    });
    expect(asked).toHaveLength(3);
    expect(asked.every((r) => r.verified)).toBe(true);
    expect(await payoutsSent(input.transactionId)).toBe(0);
  });

  it('no answer, failing open: sent', async () => {
    const { input, result } = await withdrawAsking('open', 'approve', 'hang');
    expect(result).toMatchObject({ status: 'completed', authorization: { decision: 'no_answer' } });
    expect(await payoutsSent(input.transactionId)).toBe(1);
  });

  it('an answer off the contract is no answer', async () => {
    const { input, result, asked } = await withdrawAsking('off-contract', 'deny', { decision: 'maybe' });
    expect(result).toMatchObject({ status: 'refused', reason: 'authorization_unavailable' });
    // Not worth repeating: asked once.
    expect(asked).toHaveLength(1);
    expect(await payoutsSent(input.transactionId)).toBe(0);
  });
});
