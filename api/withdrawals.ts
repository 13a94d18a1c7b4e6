import { randomUUID } from 'node:crypto';
import { Router } from 'express';
import { brandMoneyDoor } from '../api-keys/acting-brand';
import { brandOf } from '../api-keys/authenticate';
import type { Config } from '../common/config';
import { biometricsFinalStatuses, biometricsStateQuery } from '../contracts/biometrics';
import {
  type WithdrawalRequest,
  type WithdrawalState,
  type WithdrawalStatus,
  withdrawalStateQuery,
  withdrawalWorkflowId,
} from '../contracts/withdrawal';
import { withdrawalInputSchema } from '../contracts/withdrawal-input';
import { getWithdrawalReceipt } from '../db/flows';
import { type Operation, route } from '../http/operation';
import { Problem } from '../http/problem';
import { parse, type RequestPart } from '../http/request-input';
import { withdrawalRequestOf } from '../starters/requests';
import type { Refused } from '../starters/types';
import { startWithdrawal, WITHDRAWAL_REFUSED_TYPE } from '../starters/withdrawal';
import { flowState, isNotFound } from '../starters/workflow-calls';
import type { biometricsWorkflow } from '../workflows/biometrics';
import type { withdrawalWorkflow } from '../workflows/withdrawal';
import type { ApiDeps } from './deps';
import { conflict, flowNotFound, pngBytes, refusedProblem } from './flow-answers';
import {
  type WithdrawalBody,
  type WithdrawalStateView,
  withdrawalBodySchema,
  withdrawalParamsSchema,
  withdrawalResponseSchema,
} from './withdrawals-schemas';

/** Finished without a payout, so no receipt will ever be stored (a completed one always has it). */
const NEVER_A_RECEIPT: readonly WithdrawalStatus[] = ['failed', 'stuck', 'refused'];
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

/** The state as the API answers it: a step-up's link also as a QR code image URL. */
function withdrawalStateView(state: WithdrawalState): WithdrawalStateView {
  if (!state.stepUp?.url) return state;
  return {
    ...state,
    stepUp: {
      ...state.stepUp,
      qrcodeUrl: `/v1/withdrawals/${encodeURIComponent(state.transactionId)}/biometrics-link/qrcode.png`,
    },
  };
}

/** The open step-up link's QR image, from the person's biometrics flow (410 once it has ended). */
async function stepUpQrCode(temporal: ApiDeps['temporal'], stepUp: NonNullable<WithdrawalState['stepUp']>) {
  const gone = () =>
    new Problem(410, 'link-unavailable', 'The identification has ended', 'its link is no longer valid', {
      outcome: stepUp.outcome,
    });
  if (stepUp.outcome) throw gone();
  // The withdrawal keeps only the link: the image is the identification's.
  const biometrics = temporal.workflow.getHandle<typeof biometricsWorkflow>(stepUp.biometricsWorkflowId);
  const { link, status } = await flowState(biometrics, biometricsStateQuery);
  const png = link?.url === stepUp.url ? pngBytes(link?.qrcode) : undefined;
  if (!png || biometricsFinalStatuses.includes(status)) throw gone();
  return png;
}

/** An image of a withdrawal's: 410 once the withdrawal will never have it. */
const withdrawalImage = (op: Pick<Operation, 'operationId' | 'path' | 'summary' | 'description'>) =>
  ({
    ...op,
    method: 'get',
    tag: 'Withdrawals',
    params: withdrawalParamsSchema,
    ok: [{ status: 200, description: 'PNG image', png: true }],
    errors: [410],
    scopes: ['withdrawals:read'],
  }) satisfies Operation;

/** The withdrawal routes, as /openapi.json describes them and in its order. */
export const withdrawalOperations = {
  send: {
    operationId: 'createWithdrawal',
    method: 'post',
    path: '/withdrawals',
    tag: 'Withdrawals',
    summary: 'Send a Pix payout (idempotent per transactionId)',
    description:
      "The same body again is 202 with the same flow; another body with the same transactionId is 409 `conflict`. The answer comes once the money rules have decided, in the withdrawal's flow (docs/rules.md): `awaiting_biometrics` with the step-up link to hand the person, `awaiting_approval` for operators above the rules policy's payouts.approvalAboveCentavos (docs/payout-controls.md), `awaiting_authorization` while the operator backend is asked (PAYOUT_AUTHORIZATION_URL), or on its way (`sending`). A withdrawal the rules refuse is 409 `withdrawal-refused` with its `reason` code, the `policyVersion` of the rules it was decided under, the `workflowId` of the flow that keeps it, its `transactionId` and `state` (`refused`): nothing is sent, and the same request again is answered the same way. The withdrawal is the acting brand's (Pixflow-Brand): the same transactionId at another brand is another withdrawal, and another brand's is 404 on every withdrawal route, as an unknown transactionId is. A brand without an identity-payments account, which pays out, is 409 `brand-without-account`, naming the `brand`, nothing started (docs/brands.md).",
    body: withdrawalBodySchema,
    ok: [{ status: 202, description: 'Accepted', schema: withdrawalResponseSchema }],
    errors: [409],
    scopes: ['withdrawals:write'],
  },
  state: {
    operationId: 'getWithdrawal',
    method: 'get',
    path: '/withdrawals/:transactionId',
    tag: 'Withdrawals',
    summary: 'Withdrawal state',
    params: withdrawalParamsSchema,
    ok: [{ status: 200, description: 'Current state', schema: withdrawalResponseSchema }],
    scopes: ['withdrawals:read'],
  },
  stepUpQrCode: withdrawalImage({
    operationId: 'getWithdrawalStepUpQrCode',
    path: '/withdrawals/:transactionId/biometrics-link/qrcode.png',
    summary: "The step-up's biometric identification link as a QR code",
    description:
      'For a withdrawal that waits (or waited) for a biometric identification: 404 when it never needed one, 410 `link-unavailable` once the identification has ended.',
  }),
  receipt: withdrawalImage({
    operationId: 'getWithdrawalReceipt',
    path: '/withdrawals/:transactionId/receipt.png',
    summary: 'The payout receipt image',
    description:
      'While the withdrawal runs: 404 `receipt-not-found` with Retry-After (seconds). A withdrawal that ended failed or stuck, or whose run ended short of an outcome (failed, terminated), never has one: 410 `receipt-unavailable` with its flowStatus and reason.',
  }),
} satisfies Record<string, Operation>;

/**
 * The request a withdrawal is started with: the body with its transactionId and merchant filled
 * in, checked whole (the Pix key against its type) and named as `where` says.
 */
export function withdrawalRequest(
  config: Config,
  body: WithdrawalBody,
  where: RequestPart,
  transactionId: string,
): WithdrawalRequest {
  return parse(withdrawalInputSchema, where, withdrawalRequestOf(config, body, transactionId));
}

/** 409: the money rules refused the withdrawal in its first step, nothing sent. */
const withdrawalRefused = (r: Refused<WithdrawalState>) =>
  refusedProblem(r, {
    type: WITHDRAWAL_REFUSED_TYPE,
    title: 'The rules refused the withdrawal',
    detail: `the money rules refused the withdrawal (${r.reason}): nothing was sent`,
    fields: { transactionId: r.details.transactionId, state: withdrawalStateView(r.details) },
  });

export function withdrawalRoutes(deps: ApiDeps) {
  const { config, temporal, pool } = deps;
  const r = Router();
  const door = brandMoneyDoor(pool, { ttlMs: config.API_KEY_CACHE_MS });
  // A brand's withdrawal: another brand's with the same transactionId is another flow.
  const handleOf = (transactionId: string, brand: string) =>
    temporal.workflow.getHandle<typeof withdrawalWorkflow>(withdrawalWorkflowId(transactionId, brand));

  route(r, withdrawalOperations.send, async (req, res) => {
    const body = parse(withdrawalBodySchema, 'body', req.body);
    const request = withdrawalRequest(config, body, 'body', randomUUID());
    const brand = brandOf(res);
    await door.refuseWithoutAccount(brand, 'withdrawal');
    const started = await startWithdrawal({ ...deps, brandMerchant: door.merchantOf }, request, brand);
    if (started.outcome === 'conflict') throw conflict(started.reason);
    if (started.outcome === 'refused') throw withdrawalRefused(started);
    const state = started.answer;
    res
      .status(202)
      .location(`/v1/withdrawals/${state.transactionId}`)
      .json({
        workflowId: started.workflowId,
        transactionId: state.transactionId,
        state: withdrawalStateView(state),
      });
  });

  // Another brand's withdrawal is not found, as an unknown transactionId: never a 403 that says it exists.
  const stateOf = async (transactionId: string, brand: string) => {
    try {
      return await flowState(handleOf(transactionId, brand), withdrawalStateQuery);
    } catch (err) {
      if (isNotFound(err)) throw flowNotFound('withdrawal with this transactionId');
      throw err;
    }
  };

  route(r, withdrawalOperations.state, async (req, res) => {
    const { transactionId } = parse(withdrawalParamsSchema, 'path', req.params);
    const brand = brandOf(res);
    res.json({
      workflowId: withdrawalWorkflowId(transactionId, brand),
      transactionId,
      state: withdrawalStateView(await stateOf(transactionId, brand)),
    });
  });

  route(r, withdrawalOperations.stepUpQrCode, async (req, res) => {
    const { transactionId } = parse(withdrawalParamsSchema, 'path', req.params);
    const { stepUp } = await stateOf(transactionId, brandOf(res));
    if (!stepUp?.url) throw flowNotFound('biometric identification link for this withdrawal');
    const png = await stepUpQrCode(temporal, stepUp);
    res.type('image/png').set('cache-control', 'private, no-cache').send(png);
  });

  route(r, withdrawalOperations.receipt, async (req, res) => {
    const { transactionId } = parse(withdrawalParamsSchema, 'path', req.params);
    const brand = brandOf(res);
    const receipt = await getWithdrawalReceipt(pool, withdrawalWorkflowId(transactionId, brand));
    if (receipt) {
      res.type(receipt.contentType).set('cache-control', 'private, max-age=3600').send(receipt.image);
      return;
    }
    // Not stored: the flow says whether it is still to come or never will be.
    const state = await stateOf(transactionId, brand);
    if (NEVER_A_RECEIPT.includes(state.status)) throw receiptUnavailable(state.status, state.reason);
    // A run that ended short of a final status (failed for an operator, terminated) stores
    // nothing more either. A completed run has stored its receipt: only a race gets here.
    const run = (await handleOf(transactionId, brand).describe()).status.name;
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
