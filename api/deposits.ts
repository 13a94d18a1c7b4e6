import { randomUUID } from 'node:crypto';
import { type Client, type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { Router } from 'express';
import { type BrandMoneyDoor, brandMoneyDoor } from '../api-keys/acting-brand';
import { brandOf, principalOf } from '../api-keys/authenticate';
import { qrPng } from '../common/qr-image';
import { type DepositState, depositNotHeld, depositWorkflowId, resolutionUpdate } from '../contracts/deposit';
import { type ReversalRow, reversalsOf } from '../db/deposit-reversals';
import { recordApiKeyDecision } from '../db/operator-decisions';
import type { Pool } from '../db/pool';
import { type Operation, route } from '../http/operation';
import { Problem } from '../http/problem';
import { parse } from '../http/request-input';
import { depositState, describeDepositRefusal, startDeposit } from '../starters/deposit';
import { withItsReturn } from '../starters/deposit-return';
import { isNotFound, retryUpdateLostWithTask } from '../starters/workflow-calls';
import type { depositWorkflow } from '../workflows/deposit';
import {
  type DepositStateView,
  depositBodySchema,
  depositResolutionBodySchema,
  depositResolutionResponseSchema,
  depositResponseSchema,
  depositStateResponseSchema,
  parseDepositBody,
  txidParamsSchema,
} from './deposits-schemas';
import type { ApiDeps } from './deps';
import { conflict, flowNotFound, pngBytes, refusedProblem } from './flow-answers';

/**
 * The state as reads answer it: the QR's payload and a link to its PNG, not the image itself; the
 * reversals recorded beside the flow (its run may be closed long before a MED return comes).
 */
function depositStateView({ qr, ...state }: DepositState, reversals: ReversalRow[] = []): DepositStateView {
  const reversed = reversals.map(
    ({ returnId, e2eId, nature, amountCentavos, partial, state: s, firstSeenAt, settledAt }) => ({
      returnId,
      e2eId,
      nature,
      amountCentavos,
      partial,
      state: s,
      firstSeenAt,
      ...(settledAt ? { settledAt } : {}),
    }),
  );
  const withReversals = reversed.length > 0 ? { ...state, reversed } : state;
  if (!qr) return withReversals;
  const { image: _image, ...rest } = qr;
  return { ...withReversals, qr: { ...rest, imageUrl: `/v1/deposits/${state.txid}/qrcode.png` } };
}

/**
 * 422: the provider refused to create the deposit (a business error: its txid taken, a merchant
 * it does not know, data it will not take). Nothing was created and the same request would be
 * refused again, so it is the caller's to change, not a gateway failure to retry.
 */
const depositFailed = (reason: string | undefined) =>
  new Problem(422, 'deposit-failed', 'The provider refused the deposit', reason);

/** 409: a resolution for a deposit that is not held, or whose hold is already decided. */
const notHeld = (state: DepositState) =>
  new Problem(
    409,
    'not-held',
    'The deposit is not held',
    depositNotHeld(state.status, state.status === 'held' ? state.resolution?.decision : undefined),
    { flowStatus: state.status, reason: state.reason },
  );

/** A brand's deposit: another brand's with the same txid is another flow, never this one. */
type DepositHandle = (txid: string, brand: string) => WorkflowHandle<typeof depositWorkflow>;
const depositHandles =
  (temporal: Client): DepositHandle =>
  (txid, brand) =>
    temporal.workflow.getHandle<typeof depositWorkflow>(depositWorkflowId(txid, brand));

/**
 * 201 when this request started the flow, 200 for a repeat (same QR); a refusal of the rules is
 * 409 with its reason and policyVersion, the provider's refusal 422, another request for the
 * same txid 409 `conflict`.
 */
function startRoute(r: Router, deps: ApiDeps, door: BrandMoneyDoor) {
  route(r, depositOperations.create, async (req, res) => {
    const body = parseDepositBody('body', req.body);
    const brand = brandOf(res);
    await door.refuseWithoutAccount(brand, 'deposit');
    const started = await startDeposit(
      { ...deps, brandMerchant: door.merchantOf },
      body,
      randomUUID(),
      brand,
    );
    switch (started.outcome) {
      case 'conflict':
        throw conflict(started.reason);
      case 'failed':
        throw depositFailed(started.reason);
      case 'refused':
        throw refusedProblem(started, describeDepositRefusal(started.details));
      case 'attached':
        if (started.closed)
          return res.status(200).json({ workflowId: started.workflowId, ...started.answer.qr });
        break;
    }
    res
      .status(started.outcome === 'started' ? 201 : 200)
      .location(`/v1/deposits/${started.answer.txid}`)
      .json({ workflowId: started.workflowId, ...started.answer.qr });
  });
}

/**
 * An operator's decision on a held deposit, through the flow's `resolution` update (its
 * validator is the guard against a race): answered once the status it leads to is recorded.
 */
function resolutionRoute(
  r: Router,
  pool: Pool,
  handleOf: DepositHandle,
  stateOf: (txid: string, brand: string) => Promise<DepositState>,
) {
  route(r, depositOperations.resolution, async (req, res) => {
    const { txid } = parse(txidParamsSchema, 'path', req.params);
    const decision = parse(depositResolutionBodySchema, 'body', req.body);
    const brand = brandOf(res);
    const state = await stateOf(txid, brand);
    if (state.status !== 'held' || state.resolution) throw notHeld(state);
    // The proof the flow reads back before it counts the decision: the key that was checked.
    const decisionId = await recordApiKeyDecision(pool, principalOf(res).id, {
      workflowId: depositWorkflowId(txid, brand),
      kind: 'deposit.resolution',
      ...decision,
    });
    try {
      res.json(
        await retryUpdateLostWithTask(() =>
          handleOf(txid, brand).executeUpdate(resolutionUpdate, { args: [{ ...decision, decisionId }] }),
        ),
      );
    } catch (err) {
      // Decided by another request meanwhile: say what it is now.
      if (err instanceof WorkflowUpdateFailedError || isNotFound(err))
        throw notHeld(await stateOf(txid, brand));
      throw err;
    }
  });
}

/** The deposit routes, as /openapi.json describes them and in its order. */
export const depositOperations = {
  create: {
    operationId: 'createDeposit',
    method: 'post',
    path: '/deposits',
    tag: 'Deposits',
    summary: 'Create a deposit and get its Pix QR code in one call',
    description:
      "Idempotent per txid: the same request again answers the same QR (201 the first time, 200 after). The same txid with another amount, payer or merchant is 409 `conflict`. The deposit's flow screens it under the rules first (docs/rules.md) and creates nothing at the provider for one it refuses: a refusal is 409 with its `reason`, the `policyVersion` of the rules it was decided under and the `workflowId` of the flow that keeps it (GET /v1/deposits/{txid} shows it `refused`). A person whose verification is not `approved` is 409 `not-verified` (reason `not_verified`, with the person's `verification`). A deposit that would pass a limit the person set (PUT /v1/customers/{cpf}/deposit-limits) is 409 `deposit-limit-exceeded` (reason `deposit_limit_exceeded`, with the periods `exceeded` and the `remainingCentavos` of each). A person the registry of impeded people names (or named, until an operator reinstates them) is 409 `impeded` (reason `impeded`, with `impeded.reason`, `since`, `until`); one an operator closed is 409 `customer-closed` (reason `closed`). The registry unreachable is asked again for about five minutes (unless the rules policy's eligibility.failClosed is false): the caller's wait ends in 503 with Retry-After, and the same request again gets the QR once the registry answers, or 409 `eligibility-unavailable` (reason `eligibility_unavailable`) once the flow stopped asking. A refused deposit's txid stays refused: ask again with a new txid. `client.bankAccount`, when given, is the payer's own bank account (`ispb` 8 digits, `branch` 1-5 digits, `number` 1-20 digits, check digit included, no hyphen), registered as the person's. The fields it replaces, `client.bankispb`, `client.bankbranch` and `client.bankaccount`, are a 400 naming each and where it went (`renamed to client.bankAccount.ispb`). The deposit is the acting brand's (Pixflow-Brand): the same txid at another brand is another deposit, and another brand's is 404 on every deposit route, as an unknown txid is. A brand without an account at a connector that collects is 409 `brand-without-account`, naming the `brand`, nothing started (docs/brands.md).",
    body: depositBodySchema,
    ok: [
      { status: 201, description: 'Created', schema: depositResponseSchema },
      { status: 200, description: 'The same deposit again', schema: depositResponseSchema },
    ],
    errors: [409, 422],
    scopes: ['deposits:write'],
  },
  state: {
    operationId: 'getDeposit',
    method: 'get',
    path: '/deposits/:txid',
    tag: 'Deposits',
    summary: 'Deposit state',
    description:
      "The QR code is its payload and a link to its PNG (`qr.imageUrl`), not the image. A deposit paid by someone else is `held` (reason `third_party_payer`) until an operator's `resolution`, kept in the state once decided; its money sent back is in `return` (`return_requested`, then `returned` or `return_failed`), or `to_return` with `returnByHand` when its connector cannot return it.",
    params: txidParamsSchema,
    ok: [{ status: 200, description: 'Current state', schema: depositStateResponseSchema }],
    scopes: ['deposits:read'],
  },
  resolution: {
    operationId: 'resolveDeposit',
    method: 'post',
    path: '/deposits/:txid/resolution',
    tag: 'Deposits',
    summary: 'Operator decision on a held deposit (someone other than the person paid it)',
    description:
      "Only a `held` deposit takes one, once: `accept` credits it (`completed`); `return` sends the money back to the payer through the connector that received it (`return_requested`, then `returned` or `return_failed`), or, when that connector cannot return received Pix, ends it `to_return` (the money is to be sent back by hand). When the rules return a third party's money by themselves (`deposits.autoReturnThirdParty`), a hold nobody decides within `deposits.autoReturnAfterMs` is returned with `by: rules`. Answered once the new status is recorded. 409 `not-held` with its flowStatus otherwise.",
    params: txidParamsSchema,
    body: depositResolutionBodySchema,
    ok: [
      {
        status: 200,
        description: 'The decision and the status it led to',
        schema: depositResolutionResponseSchema,
      },
    ],
    errors: [409],
    scopes: ['deposits:write'],
  },
  qrCode: {
    operationId: 'getDepositQrCode',
    method: 'get',
    path: '/deposits/:txid/qrcode.png',
    tag: 'Deposits',
    summary: 'The QR code image',
    params: txidParamsSchema,
    ok: [{ status: 200, description: 'PNG image', png: true }],
    scopes: ['deposits:read'],
  },
} satisfies Record<string, Operation>;

export function depositRoutes(deps: ApiDeps) {
  const r = Router();
  const handleOf = depositHandles(deps.temporal);
  startRoute(r, deps, brandMoneyDoor(deps.pool, { ttlMs: deps.config.API_KEY_CACHE_MS }));

  // Another brand's deposit is not found, as a txid nobody used: never a 403 that says it exists.
  const stateOf = async (txid: string, brand: string) => {
    try {
      return await depositState(handleOf(txid, brand));
    } catch (err) {
      if (isNotFound(err)) throw flowNotFound('deposit with this txid');
      throw err;
    }
  };

  route(r, depositOperations.state, async (req, res) => {
    const { txid } = parse(txidParamsSchema, 'path', req.params);
    const brand = brandOf(res);
    const workflowId = depositWorkflowId(txid, brand);
    const state = await withItsReturn(deps.temporal, await stateOf(txid, brand), brand);
    const reversals = await reversalsOf(deps.pool, workflowId);
    res.json({ workflowId, state: depositStateView(state, reversals) });
  });

  resolutionRoute(r, deps.pool, handleOf, stateOf);

  route(r, depositOperations.qrCode, async (req, res) => {
    const { txid } = parse(txidParamsSchema, 'path', req.params);
    const state = await stateOf(txid, brandOf(res));
    const png = state.qr ? (pngBytes(state.qr.image) ?? (await qrPng(state.qr.payload))) : undefined;
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
