import { randomUUID } from 'node:crypto';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { Router } from 'express';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { startSearchAttributes } from '../../common/search-attributes';
import {
  conflictReasons,
  type DepositFingerprint,
  type DepositQrAnswer,
  depositStateQuery,
  qrCodeUpdate,
  workflowIds,
} from '../../workflows/definitions';
import type { depositWorkflow } from '../../workflows/deposit';
import type { DepositInput } from '../../workflows/inputs';
import type { ApiDeps } from '../app';
import { Problem } from '../problem';
import {
  conflict,
  formatBrl,
  isAlreadyStarted,
  isNotFound,
  newTxid,
  notFound,
  parse,
  requestHash,
  updateFailure,
} from '../route-helpers';
import { depositBodySchema, txidParamsSchema } from '../schemas';

export function depositRoutes({ config, temporal, timings }: ApiDeps) {
  const r = Router();
  const handleOf = (txid: string) =>
    temporal.workflow.getHandle<typeof depositWorkflow>(workflowIds.deposit(txid));

  /**
   * One round trip: update-with-start creates the flow (or attaches to the running one) and waits
   * for its QR. 201 when this request started the flow, 200 for a repeat (same QR): the update
   * answers which, comparing its request id with the one in the flow's input.
   */
  r.post('/deposits', async (req, res) => {
    const body = parse(depositBodySchema, 'body', req.body);
    const requestId = randomUUID();
    const input: DepositInput = {
      ...body,
      requestId,
      txid: body.txid ?? newTxid(),
      merchant: body.merchant ?? config.PROVIDER_MERCHANT,
      ...(timings ? { timings } : {}),
    };
    const fingerprint: DepositFingerprint = {
      amountCentavos: input.amountCentavos,
      payerCpf: input.client.cpf,
      merchant: input.merchant,
    };
    const fingerprintHash = requestHash(fingerprint, config.PII_HASH_KEY);
    const handle = handleOf(input.txid);
    const masked = maskCpf(input.client.cpf);

    let answer: DepositQrAnswer;
    try {
      answer = await temporal.workflow.executeUpdateWithStart(qrCodeUpdate, {
        args: [{ ...fingerprint, requestId }],
        startWorkflowOperation: new WithStartWorkflowOperation<typeof depositWorkflow>('depositWorkflow', {
          workflowId: handle.workflowId,
          taskQueue: config.TEMPORAL_TASK_QUEUE,
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
          // A finished deposit is never started again for the same txid (the provider would refuse it).
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          // Read back only when the deposit is closed and asked for again (below).
          memo: { fingerprintHash },
          staticSummary: `Deposit ${formatBrl(input.amountCentavos)} — txid ${input.txid.slice(0, 8)}…, payer ${masked}`,
          staticDetails: `**txid** ${input.txid}\n\n**merchant** ${input.merchant}\n\n**payer** ${masked}`,
          typedSearchAttributes: startSearchAttributes({
            type: 'deposit',
            status: 'creating',
            cpfHash: cpfHash(input.client.cpf, config.PII_HASH_KEY),
            cpfMasked: masked,
            amountCentavos: input.amountCentavos,
            merchant: input.merchant,
          }),
        }),
      });
    } catch (err) {
      const p = updateFailure(err);
      if (p) throw p;
      if (!isAlreadyStarted(err)) throw err;
      // The deposit exists and is closed: answer its QR if the request is the same one.
      const d = await handle.describe();
      if (d.memo?.fingerprintHash !== fingerprintHash) throw conflict(conflictReasons.deposit);
      const state = await handle.query(depositStateQuery);
      if (!state.qr) {
        throw new Problem(502, 'deposit-failed', 'The provider did not create the QR code', state.reason);
      }
      return res.status(200).json({ workflowId: handle.workflowId, ...state.qr });
    }
    res
      .status(answer.created ? 201 : 200)
      .location(`/v1/deposits/${input.txid}`)
      .json({ workflowId: handle.workflowId, ...answer.qr });
  });

  const stateOf = async (txid: string) => {
    try {
      return await handleOf(txid).query(depositStateQuery);
    } catch (err) {
      if (isNotFound(err)) throw notFound('deposit with this txid');
      throw err;
    }
  };

  r.get('/deposits/:txid', async (req, res) => {
    const { txid } = parse(txidParamsSchema, 'path', req.params);
    res.json({ workflowId: workflowIds.deposit(txid), state: await stateOf(txid) });
  });

  r.get('/deposits/:txid/qrcode.png', async (req, res) => {
    const { txid } = parse(txidParamsSchema, 'path', req.params);
    const state = await stateOf(txid);
    const m = /^data:image\/png;base64,(.+)$/.exec(state.qr?.image ?? '');
    if (!m?.[1]) {
      throw new Problem(
        404,
        'qrcode-not-found',
        'No QR code',
        `the deposit is ${state.status} and has no QR code`,
      );
    }
    res.type('image/png').set('cache-control', 'private, max-age=60').send(Buffer.from(m[1], 'base64'));
  });

  return r;
}
