import { WithStartWorkflowOperation, type WorkflowHandle } from '@temporalio/client';
import { type Payload, WorkflowNotFoundError } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DepositInput,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
  resolutionUpdate,
} from '../../contracts/deposit';
import { providerNotificationSignal } from '../../contracts/flow';
import { verifiedDepositor } from '../helpers/customers';
import { provenDecision } from '../helpers/decisions';
import { type FlowEnv, startFlowEnv, TEST_PII_KEY, waitForState } from '../helpers/flow-env';
import { patchMarkers, recordHistory } from '../helpers/histories';
import { testDataConverter } from '../helpers/temporal';

// A deposit someone else paid: its run continues as a held deposit's run, which waits for an
// operator and moves to newer builds. On the run's dev server: the time-skipping server sends an
// update to the first run of a workflow id, not to the run that continued it.

const { VersioningBehavior, EventType } = temporal.api.enums.v1;

let f: FlowEnv;
let n = 0;

beforeAll(async () => {
  f = await startFlowEnv({ temporal: 'dev' });
  // The person is verified: the rules let their deposits through.
  await verifiedDepositor(f.pool, TEST_PII_KEY, CLIENT_CPF);
});
afterAll(async () => {
  await f?.close();
});

/** The person (63401825771), and someone who is not the person. */
const CLIENT_CPF = '63401825771';
const OTHER_PAYER = '52998224725';

function depositInput(): DepositInput {
  n += 1;
  return {
    txid: `${Date.now()}9${n}`,
    merchant: 'sandbox-merchant',
    client: { externalId: `user-${n}`, cpf: CLIENT_CPF, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
  };
}

/** What the API does: start-or-attach and get the QR in one round trip. */
function answerQr(input: DepositInput, requestId: string) {
  return f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
    args: [
      {
        amountCentavos: input.amountCentavos,
        payerCpf: input.client.cpf,
        merchant: input.merchant,
        requestId,
      },
    ],
    startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
      workflowId: depositWorkflowId(input.txid),
      taskQueue: f.taskQueue,
      args: [{ ...input, requestId: 'req-1' }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
}

/** Pays the deposit from another CPF and wakes the flow: it ends up held. */
async function heldDeposit(input: DepositInput) {
  const { qr } = await answerQr(input, 'req-1');
  const handle = f.env.client.workflow.getHandle(depositWorkflowId(input.txid));
  await f.sandboxControl(`/sandbox/deposits/${input.txid}/pay`, { payerName: 'João', payerCpf: OTHER_PAYER });
  await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
  const held = await waitForState(
    () => handle.query(depositStateQuery),
    (s) => s.status === 'held',
  );
  return { handle, held, qr };
}

const flowRow = async (workflowId: string) =>
  (await f.pool.query('SELECT status, reason, details FROM flows WHERE workflow_id = $1', [workflowId]))
    .rows[0] as { status: string; reason: string | null; details: Record<string, unknown> };

/** Every payload of a run's history, opened with the codec, as one text. */
async function plainHistory(handle: WorkflowHandle): Promise<string> {
  const history = await handle.fetchHistory();
  const codec = testDataConverter.payloadCodecs[0]!;
  const texts: string[] = [];
  const walk = async (node: unknown): Promise<void> => {
    if (!node || typeof node !== 'object' || ArrayBuffer.isView(node)) return;
    const maybe = node as Payload;
    if (maybe.metadata && maybe.data) {
      const [open] = await codec.decode([maybe]);
      texts.push(Buffer.from(open?.data ?? []).toString());
      return;
    }
    for (const value of Object.values(node)) await walk(value);
  };
  await walk(history);
  return texts.join('\n');
}

/** The run the held deposit's run continued: the deposit's own. */
async function depositRunOf(handle: WorkflowHandle) {
  const [started] = (await handle.fetchHistory()).events ?? [];
  const runId = started?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId;
  expect(runId, 'the held run continues the deposit run').toBeTruthy();
  return f.env.client.workflow.getHandle(handle.workflowId, runId ?? undefined);
}

/** The versioning behavior each workflow task of a run was completed with. */
async function behaviors(handle: WorkflowHandle) {
  return ((await handle.fetchHistory()).events ?? [])
    .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    .map((e) => VersioningBehavior[e.workflowTaskCompletedEventAttributes?.versioningBehavior ?? 0]);
}

describe('a deposit paid by someone else', () => {
  it('is held (third_party_payer) in a run of its own; accepted, it completes with the decision kept', async () => {
    const input = depositInput();
    const { handle, held, qr } = await heldDeposit(input);
    expect(held).toMatchObject({
      status: 'held',
      reason: 'third_party_payer',
      payment: { payerIsClient: false, payerCpfMasked: '***.982.247-**' },
    });
    expect(held.finishedAt).toBeUndefined();
    // The hold names the version of the rules that decided it, in the state and the row.
    expect(held.policyVersion).toBeGreaterThanOrEqual(1);
    expect(await flowRow(handle.workflowId)).toMatchObject({
      status: 'held',
      reason: 'third_party_payer',
      details: { payerIsClient: false, policyVersion: held.policyVersion },
    });

    // The deposit's run is pinned to its build and ends by continuing as the held deposit's
    // run, which moves to the current build at each workflow task.
    const description = await handle.describe();
    expect(description.type).toBe('heldDepositWorkflow');
    const depositRun = await depositRunOf(handle);
    const depositEvents = (await depositRun.fetchHistory()).events ?? [];
    expect(depositEvents.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.workflowType?.name).toBe(
      'heldDepositWorkflow',
    );
    expect(new Set(await behaviors(depositRun))).toEqual(new Set(['VERSIONING_BEHAVIOR_PINNED']));
    expect(new Set(await behaviors(handle))).toEqual(new Set(['VERSIONING_BEHAVIOR_AUTO_UPGRADE']));
    // The search attributes the API set at start came along.
    expect(description.typedSearchAttributes.getAll().map((p) => p.key.name)).toEqual(
      expect.arrayContaining(['PixflowType', 'PixflowStatus', 'PixflowCpfMasked']),
    );
    expect(
      (await f.env.client.workflow.count(`WorkflowId = '${handle.workflowId}' AND PixflowStatus = 'held'`))
        .count,
    ).toBe(1);

    // The same request again (the API's repeated POST) still gets the deposit's QR.
    const again = await answerQr(input, 'req-again');
    expect(again).toEqual({ qr, created: false });
    // The payer's CPF stays with the activity: history holds only its masked form.
    for (const run of [depositRun, handle]) {
      const history = await plainHistory(run);
      expect(history).toContain('***.982.247-**');
      expect(history).not.toContain(OTHER_PAYER);
    }

    const answer = await handle.executeUpdate(resolutionUpdate, {
      args: [
        await provenDecision(f.pool, handle.workflowId, 'deposit.resolution', 'ops@example.com', {
          decision: 'accept',
          by: 'ops@example.com',
          reason: 'paid by her husband, documented',
        }),
      ],
    });
    expect(answer).toEqual({
      txid: input.txid,
      decision: 'accept',
      by: 'ops@example.com',
      reason: 'paid by her husband, documented',
      status: 'completed',
    });
    // The answer comes once the new status is recorded.
    expect(await flowRow(handle.workflowId)).toMatchObject({
      status: 'completed',
      reason: null,
      details: { resolution: { decision: 'accept', by: 'ops@example.com' } },
    });
    const result = await handle.result();
    expect(result).toMatchObject({
      status: 'completed',
      notifications: 1,
      resolution: { decision: 'accept', by: 'ops@example.com', reason: 'paid by her husband, documented' },
    });
    expect(result).not.toHaveProperty('qr');
    expect(result.resolution?.at).toEqual(expect.any(String));
    expect(result.finishedAt).toEqual(expect.any(String));
    // Only a held deposit, not yet decided, takes a resolution: this one's run has ended, so the
    // server refuses a second decision before any workflow code sees it, and nothing changes.
    const twice = await handle
      .executeUpdate(resolutionUpdate, { args: [{ decision: 'return', by: 'x', reason: 'y' }] })
      .catch((e: Error) => e);
    expect(twice).toBeInstanceOf(WorkflowNotFoundError);
    expect((twice as Error).message).toMatch(/workflow execution already completed/);
    expect((await handle.describe()).status.name).toBe('COMPLETED');
    expect(await flowRow(handle.workflowId)).toMatchObject({ status: 'completed' });
    await recordHistory(depositRun, 'deposit-held');
    // Held deposits open before the check and the returns replay without them; this one took both.
    const markers = (await patchMarkers(handle)).join();
    expect(markers).toContain('decision-proofs');
    expect(markers).toContain('deposit-returns');
    await recordHistory(handle, 'deposit-held-accepted-deposit-returns');
  });

  it('returned, it ends to_return (final) with the reason and the decision: its provider cannot return it', async () => {
    const input = depositInput();
    const { handle } = await heldDeposit(input);
    const answer = await handle.executeUpdate(resolutionUpdate, {
      args: [
        await provenDecision(f.pool, handle.workflowId, 'deposit.resolution', 'ops@example.com', {
          decision: 'return',
          by: 'ops@example.com',
          reason: 'payer unknown to the person',
        }),
      ],
    });
    expect(answer.status).toBe('to_return');
    const result = await handle.result();
    expect(result).toMatchObject({
      status: 'to_return',
      reason: 'third_party_payer',
      resolution: { decision: 'return', by: 'ops@example.com', reason: 'payer unknown to the person' },
      returnByHand: { connector: 'identity-payments', why: 'connector_cannot_return' },
    });
    expect(result.finishedAt).toEqual(expect.any(String));
    expect(await flowRow(handle.workflowId)).toMatchObject({
      status: 'to_return',
      reason: 'third_party_payer',
      details: { payerIsClient: false, resolution: { decision: 'return', by: 'ops@example.com' } },
    });
    await recordHistory(handle, 'deposit-held-returned-deposit-returns');
  });
});
