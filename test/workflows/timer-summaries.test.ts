import { WithStartWorkflowOperation } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { temporal } from '@temporalio/proto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { escapeMarkdown } from '../../common/markdown';
import { type DepositInput, depositWorkflowId, qrCodeUpdate } from '../../contracts/deposit';
import { providerNotificationSignal } from '../../contracts/flow';
import { verifiedDepositor } from '../helpers/customers';
import { type FlowEnv, startFlowEnv, TEST_PII_KEY } from '../helpers/flow-env';
import { testDataConverter } from '../helpers/temporal';

// Every timer a flow starts has a summary: the Temporal UI names it on the timeline ("Payment,
// until the QR code expires") instead of a bare duration. A deposit paid on the dev server, whose
// history keeps each TIMER_STARTED event's user metadata.

let f: FlowEnv;
beforeAll(async () => {
  f = await startFlowEnv({ temporal: 'dev' });
  // The person is verified: the rules let their deposits through.
  await verifiedDepositor(f.pool, TEST_PII_KEY, '63401825771');
});
afterAll(async () => {
  await f?.close();
});

/** The summary of each timer the history started, opened with the codec ('' for none). */
async function timerSummaries(events: temporal.api.history.v1.IHistoryEvent[]): Promise<string[]> {
  const started = events.filter((e) => e.timerStartedEventAttributes);
  return Promise.all(
    started.map(async (e) => {
      const summary = e.userMetadata?.summary;
      if (!summary) return '';
      const [open] = await testDataConverter.payloadCodecs[0]!.decode([summary]);
      return String(defaultPayloadConverter.fromPayload(open!));
    }),
  );
}

it("a deposit's timers each have a summary, as Markdown that reads as written", async () => {
  const input: DepositInput = {
    txid: `${Date.now()}9`,
    merchant: 'sandbox-merchant',
    client: { externalId: 'user-1', cpf: '63401825771', email: 'ana@example.com', name: 'Ana Souza' },
    amountCentavos: 15_000,
  };
  const workflowId = depositWorkflowId(input.txid);
  await f.env.client.workflow.executeUpdateWithStart(qrCodeUpdate, {
    args: [
      {
        amountCentavos: input.amountCentavos,
        payerCpf: input.client.cpf,
        merchant: input.merchant,
        requestId: 'r1',
      },
    ],
    startWorkflowOperation: new WithStartWorkflowOperation('depositWorkflow', {
      workflowId,
      taskQueue: f.taskQueue,
      args: [{ ...input, requestId: 'r1' }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  await f.sandboxControl(`/sandbox/deposits/${input.txid}/pay`, {
    payerName: 'Ana Souza',
    payerCpf: input.client.cpf,
  });
  const handle = f.env.client.workflow.getHandle(workflowId);
  await handle.signal(providerNotificationSignal, { type: 'deposit', action: 'updated', id: input.txid });
  expect(await handle.result()).toMatchObject({ status: 'completed' });

  const summaries = await timerSummaries((await handle.fetchHistory()).events ?? []);
  expect(summaries.length).toBeGreaterThan(0);
  for (const s of summaries) {
    expect(s).toBe('Payment, until the QR code expires');
    expect(escapeMarkdown(s)).toBe(s);
  }
});
