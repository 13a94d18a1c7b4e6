import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { startSearchAttributes } from '../../common/search-attributes';
import {
  WITHDRAWAL_CONFLICT,
  type WithdrawalInput,
  type WithdrawalStatus,
  withdrawalRequestUpdate,
  withdrawalStateQuery,
  withdrawalWorkflowId,
} from '../../contracts/withdrawal';
import { withdrawalInputSchema } from '../../contracts/withdrawal-input';
import { getWithdrawalReceipt } from '../../db/flows';
import type { withdrawalWorkflow } from '../../workflows/withdrawal';
import type { ApiDeps } from '../deps';
import { Problem } from '../problem';
import { formatBrl, isNotFound, notFound, parse, requestHash } from '../route-helpers';
import { withdrawalBodySchema, withdrawalParamsSchema } from '../schemas';
import { startOrAttach } from '../start-flow';

/** Finished without a payout, so no receipt will ever be stored (a completed one always has it). */
const NEVER_A_RECEIPT: readonly WithdrawalStatus[] = ['failed', 'stuck'];
/** Seconds a caller waits before asking again for a receipt that is not stored yet. */
const RECEIPT_RETRY_AFTER_S = 5;

const receiptUnavailable = (status: WithdrawalStatus, reason: string | undefined) =>
  new Problem(
    410,
    'receipt-unavailable',
    'The withdrawal will never have a receipt',
    `the withdrawal is ${status}${reason ? `: ${reason}` : ''}`,
    { flowStatus: status, reason },
  );

export function withdrawalRoutes({ config, temporal, pool, timings }: ApiDeps) {
  const r = Router();
  const handleOf = (id: string) =>
    temporal.workflow.getHandle<typeof withdrawalWorkflow>(withdrawalWorkflowId(id));

  /**
   * One round trip: update-with-start creates the flow (or attaches to the running one) and
   * answers its state once the first workflow task is done. Idempotent per transactionId: the
   * update's validator refuses a request that differs from the one that started the flow (409,
   * nothing is sent). A finished flow is never started again: its memo's keyed hash of the
   * request tells a repeat (202 with its state) from a conflict (409).
   */
  r.post('/withdrawals', async (req, res) => {
    const body = parse(withdrawalBodySchema, 'body', req.body);
    const request = parse(withdrawalInputSchema, 'body', {
      ...body,
      transactionId: body.transactionId ?? randomUUID(),
      merchant: body.merchant ?? config.PROVIDER_MERCHANT,
    });
    const input: WithdrawalInput = { ...request, ...(timings ? { timings } : {}) };
    const handle = handleOf(input.transactionId);
    const masked = maskCpf(input.client.cpf);
    const outcome = await startOrAttach(temporal, withdrawalRequestUpdate, [request], {
      workflowType: 'withdrawalWorkflow',
      options: {
        workflowId: handle.workflowId,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        args: [input],
        staticSummary: `Withdrawal ${formatBrl(input.amountCentavos)} — ${input.transactionId}, payee ${masked} (${input.pixType} key)`,
        staticDetails: `**transactionId** ${input.transactionId}\n\n**merchant** ${input.merchant}\n\n**payee** ${masked}`,
        typedSearchAttributes: startSearchAttributes({
          type: 'withdrawal',
          status: 'validating',
          cpfHash: cpfHash(input.client.cpf, config.PII_HASH_KEY),
          cpfMasked: masked,
          amountCentavos: input.amountCentavos,
          merchant: input.merchant,
        }),
      },
      requestHash: { memoKey: 'requestHash', value: requestHash(request, config.PII_HASH_KEY) },
      conflictReason: WITHDRAWAL_CONFLICT,
    });
    const state = outcome.answered ? outcome.answer : await outcome.closed.query(withdrawalStateQuery);
    res
      .status(202)
      .location(`/v1/withdrawals/${input.transactionId}`)
      .json({ workflowId: handle.workflowId, transactionId: input.transactionId, state });
  });

  const stateOf = async (id: string) => {
    try {
      return await handleOf(id).query(withdrawalStateQuery);
    } catch (err) {
      if (isNotFound(err)) throw notFound('withdrawal with this transactionId');
      throw err;
    }
  };

  r.get('/withdrawals/:id', async (req, res) => {
    const { id } = parse(withdrawalParamsSchema, 'path', req.params);
    res.json({ workflowId: withdrawalWorkflowId(id), transactionId: id, state: await stateOf(id) });
  });

  r.get('/withdrawals/:id/receipt.png', async (req, res) => {
    const { id } = parse(withdrawalParamsSchema, 'path', req.params);
    const receipt = await getWithdrawalReceipt(pool, id);
    if (receipt) {
      res.type(receipt.contentType).set('cache-control', 'private, max-age=3600').send(receipt.image);
      return;
    }
    // Not stored: the flow says whether it is still to come or never will be.
    const state = await stateOf(id);
    if (NEVER_A_RECEIPT.includes(state.status)) throw receiptUnavailable(state.status, state.reason);
    // A run that ended short of a final status (failed for an operator, terminated) stores
    // nothing more either. A completed run has stored its receipt: only a race gets here.
    const run = (await handleOf(id).describe()).status.name;
    if (run !== 'RUNNING' && run !== 'COMPLETED') {
      throw receiptUnavailable(state.status, state.reason ?? `its run is ${run.toLowerCase()}`);
    }
    res.set('retry-after', String(RECEIPT_RETRY_AFTER_S));
    throw new Problem(
      404,
      'receipt-not-found',
      'No receipt yet',
      `the withdrawal is ${state.status}: its receipt is stored once the payout completes`,
      { flowStatus: state.status },
    );
  });

  return r;
}
