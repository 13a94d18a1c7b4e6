import { WithStartWorkflowOperation } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DepositInput,
  type DepositState,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
  resolutionUpdate,
} from '../../contracts/deposit';
import { providerNotificationSignal } from '../../contracts/flow';
import { staticPolicyReader } from '../../policy/seed';
import { verifiedDepositor } from '../helpers/customers';
import { provenDecision } from '../helpers/decisions';
import { type FlowEnv, startFlowEnv, TEST_PII_KEY, waitForState } from '../helpers/flow-env';
import { patchMarkers, recordHistory } from '../helpers/histories';
import { policyWith } from '../helpers/policy';
import { createTestWorker } from '../helpers/worker';

// A held deposit's money goes back to its payer through the connector that received it, on an
// operator's `return` or by the rules after the review delay; a connector that cannot return
// leaves it to be returned by hand. On the run's dev server: updates reach the held run there.

let f: FlowEnv;
let n = 0;

beforeAll(async () => {
  f = await startFlowEnv({ temporal: 'dev' });
  await verifiedDepositor(f.pool, TEST_PII_KEY, CLIENT_CPF);
});
afterAll(async () => {
  await f?.close();
});

const CLIENT_CPF = '63401825771';
const OTHER_PAYER = '52998224725';

function depositInput(): DepositInput {
  n += 1;
  return {
    txid: `${Date.now()}7${n}`,
    merchant: 'sandbox-merchant',
    client: { externalId: `user-${n}`, cpf: CLIENT_CPF, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
  };
}

const flowRow = async (workflowId: string) =>
  (await f.pool.query('SELECT status, reason, details FROM flows WHERE workflow_id = $1', [workflowId]))
    .rows[0] as { status: string; reason: string | null; details: Record<string, unknown> };

/** A deposit on the first provider, paid from another CPF: held, on `taskQueue`. */
async function heldOnFirstProvider(taskQueue = f.taskQueue) {
  const input = depositInput();
  await f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
    args: [
      {
        amountCentavos: input.amountCentavos,
        payerCpf: input.client.cpf,
        merchant: input.merchant,
        requestId: 'req-1',
      },
    ],
    startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
      workflowId: depositWorkflowId(input.txid),
      taskQueue,
      args: [{ ...input, requestId: 'req-1' }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  const handle = f.env.client.workflow.getHandle(depositWorkflowId(input.txid));
  await f.sandboxControl(`/sandbox/deposits/${input.txid}/pay`, { payerName: 'João', payerCpf: OTHER_PAYER });
  await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
  const held = await waitForState(
    () => handle.query(depositStateQuery),
    (s) => s.status === 'held',
  );
  return { input, handle, held };
}

/** An operator's proven decision on the held deposit. */
const decide = async (workflowId: string, decision: 'accept' | 'return', reason: string) =>
  provenDecision(f.pool, workflowId, 'deposit.resolution', 'ops@example.com', {
    decision,
    by: 'ops@example.com',
    reason,
  });

/** A worker of its own whose rules return a held third party's money after `afterMs`. */
async function withAutoReturn(afterMs: number, body: (taskQueue: string) => Promise<void>) {
  const taskQueue = `${f.taskQueue}-auto-${afterMs}`;
  const worker = await createTestWorker({
    connection: f.env.nativeConnection,
    client: f.env.client,
    taskQueue,
    provider: f.provider,
    pool: f.pool,
    piiKey: TEST_PII_KEY,
    policy: staticPolicyReader(
      policyWith({ deposits: { autoReturnThirdParty: true, autoReturnAfterMs: afterMs } }),
      7,
    ),
  });
  const running = worker.run();
  try {
    await body(taskQueue);
  } finally {
    worker.shutdown();
    await running;
  }
}

describe('a held deposit on the first provider, which cannot return received Pix', () => {
  it("an operator's return leaves it to_return, to be returned by hand, and the state says why", async () => {
    const { handle } = await heldOnFirstProvider();
    const answer = await handle.executeUpdate(resolutionUpdate, {
      args: [await decide(handle.workflowId, 'return', 'payer unknown to the person')],
    });
    expect(answer.status).toBe('to_return');
    const result: DepositState = await handle.result();
    expect(result).toMatchObject({
      status: 'to_return',
      reason: 'third_party_payer',
      resolution: { decision: 'return', by: 'ops@example.com' },
      returnByHand: { connector: 'identity-payments', why: 'connector_cannot_return' },
    });
    expect(result.return).toBeUndefined();
    expect(await flowRow(handle.workflowId)).toMatchObject({
      status: 'to_return',
      reason: 'third_party_payer',
      details: { returnByHand: { connector: 'identity-payments', why: 'connector_cannot_return' } },
    });
    expect((await patchMarkers(handle)).join()).toContain('deposit-returns');
    await recordHistory(handle, 'deposit-held-returned-by-hand');
  });
});

describe('the automatic return of a third party’s money', () => {
  it('with no operator within the review delay, the rules return it, decided by rules under their version', async () => {
    await withAutoReturn(2_000, async (taskQueue) => {
      const { handle } = await heldOnFirstProvider(taskQueue);
      const result: DepositState = await handle.result();
      expect(result).toMatchObject({
        status: 'to_return',
        resolution: { decision: 'return', by: 'rules', policyVersion: 7 },
        returnByHand: { connector: 'identity-payments', why: 'connector_cannot_return' },
      });
      expect(
        Date.parse(result.finishedAt ?? '') - Date.parse(result.resolution?.at ?? ''),
      ).toBeGreaterThanOrEqual(0);
      expect(await flowRow(handle.workflowId)).toMatchObject({
        status: 'to_return',
        details: { resolution: { decision: 'return', by: 'rules' } },
      });
      // A decision after the rules' is refused: the hold is decided.
      const late = await handle
        .executeUpdate(resolutionUpdate, { args: [await decide(handle.workflowId, 'accept', 'too late')] })
        .catch((e: Error) => e);
      expect(late).toBeInstanceOf(Error);
      await recordHistory(handle, 'deposit-held-auto-returned-by-hand');
    });
  });

  it('an operator deciding within the review delay wins: accepted, it completes and nothing is returned', async () => {
    await withAutoReturn(60_000, async (taskQueue) => {
      const { handle } = await heldOnFirstProvider(taskQueue);
      const answer = await handle.executeUpdate(resolutionUpdate, {
        args: [await decide(handle.workflowId, 'accept', 'paid by her husband, documented')],
      });
      expect(answer.status).toBe('completed');
      const result: DepositState = await handle.result();
      expect(result).toMatchObject({ status: 'completed', resolution: { by: 'ops@example.com' } });
      expect(result.return).toBeUndefined();
      expect(result.returnByHand).toBeUndefined();
    });
  });
});
