import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { startSearchAttributes } from '../../common/search-attributes';
import { getWithdrawalReceipt } from '../../db/flows';
import { withdrawalStateQuery, workflowIds } from '../../workflows/definitions';
import { type WithdrawalInput, withdrawalInputSchema } from '../../workflows/inputs';
import type { withdrawalWorkflow } from '../../workflows/withdrawal';
import type { ApiDeps } from '../app';
import { Problem } from '../problem';
import { formatBrl, isAlreadyStarted, isNotFound, notFound, parse, requestHash } from '../route-helpers';
import { withdrawalBodySchema, withdrawalParamsSchema } from '../schemas';

export function withdrawalRoutes({ config, temporal, pool, timings }: ApiDeps) {
  const r = Router();
  const handleOf = (id: string) =>
    temporal.workflow.getHandle<typeof withdrawalWorkflow>(workflowIds.withdrawal(id));

  /**
   * Idempotent per transactionId: the start stores a keyed hash of the whole (defaulted) request
   * in the memo; a later start that finds the flow compares it. Same request: 202 with the same
   * flow; anything different: 409, and nothing is sent.
   */
  r.post('/withdrawals', async (req, res) => {
    const body = parse(withdrawalBodySchema, 'body', req.body);
    const base = parse(withdrawalInputSchema, 'body', {
      ...body,
      transactionId: body.transactionId ?? randomUUID(),
      merchant: body.merchant ?? config.PROVIDER_MERCHANT,
    });
    const hash = requestHash(base, config.PII_HASH_KEY);
    const input: WithdrawalInput = { ...base, ...(timings ? { timings } : {}) };
    const handle = handleOf(input.transactionId);
    const masked = maskCpf(input.client.cpf);
    try {
      await temporal.workflow.start<typeof withdrawalWorkflow>('withdrawalWorkflow', {
        workflowId: handle.workflowId,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        args: [input],
        workflowIdConflictPolicy: 'FAIL',
        // Money moves once per transactionId, ever: a finished one is never started again.
        workflowIdReusePolicy: 'REJECT_DUPLICATE',
        memo: { requestHash: hash },
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
      });
    } catch (err) {
      if (!isAlreadyStarted(err)) throw err;
      const d = await handle.describe();
      if (d.memo?.requestHash !== hash) {
        throw new Problem(
          409,
          'conflict',
          'Conflicts with the existing flow',
          'transactionId already used for a different withdrawal',
        );
      }
    }
    const state = await handle.query(withdrawalStateQuery);
    res
      .status(202)
      .location(`/v1/withdrawals/${input.transactionId}`)
      .json({ workflowId: handle.workflowId, transactionId: input.transactionId, state });
  });

  r.get('/withdrawals/:id', async (req, res) => {
    const { id } = parse(withdrawalParamsSchema, 'path', req.params);
    try {
      const state = await handleOf(id).query(withdrawalStateQuery);
      res.json({ workflowId: workflowIds.withdrawal(id), transactionId: id, state });
    } catch (err) {
      if (isNotFound(err)) throw notFound('withdrawal with this transactionId');
      throw err;
    }
  });

  r.get('/withdrawals/:id/receipt.png', async (req, res) => {
    const { id } = parse(withdrawalParamsSchema, 'path', req.params);
    const receipt = await getWithdrawalReceipt(pool, id);
    if (!receipt) {
      throw new Problem(
        404,
        'receipt-not-found',
        'No receipt yet',
        'the withdrawal has no stored receipt (yet)',
      );
    }
    res.type(receipt.contentType).set('cache-control', 'private, max-age=3600').send(receipt.image);
  });

  return r;
}
