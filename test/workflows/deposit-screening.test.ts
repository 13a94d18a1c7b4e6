import { WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { cpfHash } from '../../common/pii';
import {
  DEPOSIT_REFUSED,
  type DepositInput,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
} from '../../contracts/deposit';
import type { EligibilityRegistry } from '../../eligibility/registry';
import { EligibilityUnavailableError } from '../../eligibility/registry';
import { staticPolicyReader } from '../../policy/seed';
import { workflowExists } from '../../starters/workflow-calls';
import { verifiedDepositor } from '../helpers/customers';
import { type FlowEnv, startFlowEnv, TEST_PII_KEY } from '../helpers/flow-env';
import { newCpf } from '../helpers/people';
import { policyWith } from '../helpers/policy';
import { expectActivityFailure } from '../helpers/sdk-log';
import { waitUntil } from '../helpers/wait';
import { createTestWorker } from '../helpers/worker';

// A deposit's screening against the registry of impeded people, in its flow on the time-skipping
// server (the waits between its tries are timers): the real activities, a registry that never
// answers or names the person, the policy's failClosed both ways.

let f: FlowEnv;
let n = 0;

beforeAll(async () => {
  f = await startFlowEnv();
});
afterAll(async () => {
  await f?.close();
});

const down: EligibilityRegistry = {
  check: async () => {
    throw new EligibilityUnavailableError('registry down (test)');
  },
};
const impeded: EligibilityRegistry = {
  check: async () => ({ status: 'impeded', reason: 'self_excluded' }),
};

/** A worker of its own with `registry` and the policy `failClosed` says, while `body` runs. */
async function withRegistry(
  registry: EligibilityRegistry,
  failClosed: boolean,
  body: (taskQueue: string) => Promise<void>,
) {
  const taskQueue = `${f.taskQueue}-screen-${++n}`;
  const worker = await createTestWorker({
    connection: f.env.nativeConnection,
    client: f.env.client,
    taskQueue,
    provider: f.provider,
    pool: f.pool,
    piiKey: TEST_PII_KEY,
    eligibility: registry,
    policy: staticPolicyReader(policyWith({ eligibility: { failClosed } }), 7),
  });
  const running = worker.run();
  try {
    await body(taskQueue);
  } finally {
    worker.shutdown();
    await running;
  }
}

async function depositOf(): Promise<DepositInput> {
  const cpf = newCpf();
  await verifiedDepositor(f.pool, TEST_PII_KEY, cpf);
  return {
    txid: `${Date.now()}${++n}`,
    merchant: 'sandbox-merchant',
    client: { externalId: `user-${n}`, cpf, email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
    requestId: 'req-1',
  };
}

const askQr = (input: DepositInput, taskQueue: string) =>
  f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
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
      args: [input],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });

/** The refusal the QR update failed with: its details. */
async function refusalOf(answer: Promise<unknown>) {
  const err = await answer.catch((e: unknown) => e);
  expect(err).toBeInstanceOf(WorkflowUpdateFailedError);
  const cause = (err as WorkflowUpdateFailedError).cause;
  expect(cause).toBeInstanceOf(ApplicationFailure);
  expect((cause as ApplicationFailure).type).toBe(DEPOSIT_REFUSED);
  return (cause as ApplicationFailure).details?.[0];
}

it('the registry never answering, failing closed: asked again for about five minutes, then refused eligibility_unavailable under the policy version', async () => {
  await withRegistry(down, true, async (taskQueue) => {
    const input = await depositOf();
    const tries = expectActivityFailure({
      workflowId: depositWorkflowId(input.txid),
      activityType: 'screenDeposit',
      error: /registry of impeded people did not answer/,
    });
    // Read as it settles: the update fails while the test waits on the flow's result.
    const refusal = refusalOf(askQr(input, taskQueue));
    const handle = f.env.client.workflow.getHandle(depositWorkflowId(input.txid));
    await waitUntil(() => workflowExists(handle), Boolean);
    // Waiting on its result lets the server skip the waits between the screening's tries.
    const result = await handle.result();
    expect(result).toMatchObject({ status: 'refused', reason: 'eligibility_unavailable', policyVersion: 7 });
    expect(await refusal).toEqual({ reason: 'eligibility_unavailable', policyVersion: 7 });
    expect(result.qr).toBeUndefined();
    // Every try but the last was retried; the waits between them ran as timers, about five minutes.
    expect(tries().length).toBeGreaterThanOrEqual(13);
    const started = Date.parse(result.startedAt);
    expect(Date.parse(result.finishedAt ?? '') - started).toBeGreaterThan(4 * 60_000);
    // Nothing at the provider for its txid.
    expect(await f.provider.lookUpDeposit(input.txid)).toEqual({ state: 'not_found' });
  });
}, 60_000);

it('the registry never answering, failing open: the deposit goes on unscreened and gets its QR', async () => {
  await withRegistry(down, false, async (taskQueue) => {
    const input = await depositOf();
    const tries = expectActivityFailure({
      workflowId: depositWorkflowId(input.txid),
      activityType: 'screenDeposit',
      error: /./,
    });
    const { qr } = await askQr(input, taskQueue);
    expect(qr.txid).toBe(input.txid);
    expect(tries()).toEqual([]);
    const state = await f.env.client.workflow
      .getHandle(depositWorkflowId(input.txid))
      .query(depositStateQuery);
    expect(state).toMatchObject({ status: 'awaiting_payment', policyVersion: 7 });
  });
});

it('the registry naming the person: refused impeded, with the impediment, and it is recorded on their row', async () => {
  await withRegistry(impeded, true, async (taskQueue) => {
    const input = await depositOf();
    expect(await refusalOf(askQr(input, taskQueue))).toMatchObject({
      reason: 'impeded',
      impeded: { reason: 'self_excluded', until: null },
      policyVersion: 7,
    });
    const { rows } = await f.pool.query(
      'SELECT eligibility, impeded_reason, impeded_source FROM customers WHERE cpf_hash = $1',
      [cpfHash(input.client.cpf, TEST_PII_KEY)],
    );
    expect(rows).toEqual([
      { eligibility: 'impeded', impeded_reason: 'self_excluded', impeded_source: 'registry:deposit' },
    ]);
  });
});
