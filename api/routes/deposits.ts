import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { startSearchAttributes } from '../../common/search-attributes';
import {
  DEPOSIT_CONFLICT,
  type DepositFingerprint,
  type DepositInput,
  type DepositState,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
} from '../../contracts/deposit';
import type { depositWorkflow } from '../../workflows/deposit';
import type { ApiDeps } from '../deps';
import { Problem } from '../problem';
import {
  depositRefused,
  formatBrl,
  isNotFound,
  newTxid,
  notFound,
  parse,
  pngBytes,
  requestHash,
} from '../route-helpers';
import { type DepositStateView, depositBodySchema, txidParamsSchema } from '../schemas';
import { startOrAttach } from '../start-flow';

/** The state as reads answer it: the QR's payload and a link to its PNG, not the image itself. */
function depositStateView({ qr, ...state }: DepositState): DepositStateView {
  if (!qr) return state;
  const { image: _image, ...rest } = qr;
  return { ...state, qr: { ...rest, imageUrl: `/v1/deposits/${state.txid}/qrcode.png` } };
}

export function depositRoutes({ config, temporal, timings }: ApiDeps) {
  const r = Router();
  const handleOf = (txid: string) =>
    temporal.workflow.getHandle<typeof depositWorkflow>(depositWorkflowId(txid));

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
    const handle = handleOf(input.txid);
    const masked = maskCpf(input.client.cpf);

    const outcome = await startOrAttach(temporal, qrCodeUpdate, [{ ...fingerprint, requestId }], {
      workflowType: 'depositWorkflow',
      options: {
        workflowId: handle.workflowId,
        taskQueue: config.TEMPORAL_TASK_QUEUE,
        args: [input],
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
      },
      requestHash: { memoKey: 'fingerprintHash', value: requestHash(fingerprint, config.PII_HASH_KEY) },
      conflictReason: DEPOSIT_CONFLICT,
    });
    if (!outcome.answered) {
      // The same deposit again, closed: its QR, if it ever had one.
      const state = await outcome.closed.query(depositStateQuery);
      if (!state.qr) throw depositRefused(state.reason);
      return res.status(200).json({ workflowId: handle.workflowId, ...state.qr });
    }
    res
      .status(outcome.answer.created ? 201 : 200)
      .location(`/v1/deposits/${input.txid}`)
      .json({ workflowId: handle.workflowId, ...outcome.answer.qr });
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
    res.json({ workflowId: depositWorkflowId(txid), state: depositStateView(await stateOf(txid)) });
  });

  r.get('/deposits/:txid/qrcode.png', async (req, res) => {
    const { txid } = parse(txidParamsSchema, 'path', req.params);
    const state = await stateOf(txid);
    const png = pngBytes(state.qr?.image);
    if (!png) {
      throw new Problem(
        404,
        'qrcode-not-found',
        'No QR code',
        `the deposit is ${state.status} and has no QR code`,
      );
    }
    res.type('image/png').set('cache-control', 'private, max-age=60').send(png);
  });

  return r;
}
