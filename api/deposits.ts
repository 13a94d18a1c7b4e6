import { randomInt, randomUUID } from 'node:crypto';
import { type Client, type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { Router } from 'express';
import { principalOf } from '../api-keys/authenticate';
import { escapeMarkdown } from '../common/markdown';
import { maskCpf } from '../common/mask';
import { formatBrl } from '../common/money';
import { cpfHash } from '../common/pii';
import { qrDataUrl, qrPng } from '../common/qr-image';
import { startSearchAttributes } from '../common/search-attributes';
import {
  DEPOSIT_CONFLICT,
  DEPOSIT_FAILED,
  type DepositFingerprint,
  type DepositInput,
  type DepositQr,
  type DepositQrAnswer,
  type DepositState,
  depositNotHeld,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
  resolutionUpdate,
} from '../contracts/deposit';
import { recordApiKeyDecision } from '../db/operator-decisions';
import type { Pool } from '../db/pool';
import { type Operation, route } from '../http/operation';
import { Problem } from '../http/problem';
import { parse } from '../http/request-input';
import {
  flowState,
  isNotFound,
  retryUpdateLostWithTask,
  runRecord,
  workflowExists,
} from '../http/workflow-calls';
import type { depositWorkflow, HeldDepositInput } from '../workflows/deposit';
import { depositStandingOf, refuseImpeded, refuseOverDepositLimits, refuseUnverified } from './deposit-gates';
import {
  type DepositBody,
  type DepositStateView,
  depositBodySchema,
  depositResolutionBodySchema,
  depositResolutionResponseSchema,
  depositResponseSchema,
  depositStateResponseSchema,
  parseDepositBody,
  txidParamsSchema,
} from './deposits-schemas';
import type { ApiDeps, FlowStarter } from './deps';
import { flowNotFound, pngBytes } from './flow-answers';
import { requestHash, startOrAttach } from './start-flow';

/**
 * A completed deposit's state with its QR, which the run's result leaves out and its history
 * keeps: a held deposit's run was continued with the deposit's state, a deposit's run answered it
 * to the `qrCode` update.
 */
async function withQrOfRun(state: DepositState, run: WorkflowHandle): Promise<DepositState> {
  const { input, updateAnswers } = await runRecord(run, qrCodeUpdate.name);
  const qr =
    (input as Partial<HeldDepositInput> | undefined)?.state?.qr ??
    (updateAnswers[0] as DepositQrAnswer | undefined)?.qr;
  return qr ? { ...state, qr } : state;
}

/** A deposit's state, running or finished (http/workflow-calls.ts). */
const depositState = (handle: WorkflowHandle) => flowState(handle, depositStateQuery, withQrOfRun);

/** The state as reads answer it: the QR's payload and a link to its PNG, not the image itself. */
function depositStateView({ qr, ...state }: DepositState): DepositStateView {
  if (!qr) return state;
  const { image: _image, ...rest } = qr;
  return { ...state, qr: { ...rest, imageUrl: `/v1/deposits/${state.txid}/qrcode.png` } };
}

/**
 * The QR as the caller gets it, with its image: drawn from the payload, which is all a flow needs
 * to keep (an image a flow holds, the provider's, is the same code).
 */
async function withQrImage(qr: DepositQr): Promise<DepositQr & { image: string }> {
  return { ...qr, image: qr.image ?? (await qrDataUrl(qr.payload)) };
}

/**
 * 422: the provider refused to create the deposit (a business error: its txid taken, a merchant
 * it does not know, data it will not take). Nothing was created and the same request would be
 * refused again, so it is the caller's to change, not a gateway failure to retry.
 */
const depositRefused = (reason: string | undefined) =>
  new Problem(422, 'deposit-failed', 'The provider refused the deposit', reason);

/** 32 random digits: a valid txid (digits only, at most 33). */
export function newTxid(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += String(randomInt(10));
  return s;
}

/** 409: a resolution for a deposit that is not held, or whose hold is already decided. */
const notHeld = (state: DepositState) =>
  new Problem(
    409,
    'not-held',
    'The deposit is not held',
    depositNotHeld(state.status, state.status === 'held' ? state.resolution?.decision : undefined),
    { flowStatus: state.status, reason: state.reason },
  );

type DepositHandle = (txid: string) => WorkflowHandle<typeof depositWorkflow>;
const depositHandles =
  (temporal: Client): DepositHandle =>
  (txid) =>
    temporal.workflow.getHandle<typeof depositWorkflow>(depositWorkflowId(txid));

/** A deposit as its start answers it. */
export interface DepositStart {
  workflowId: string;
  txid: string;
  qr: DepositQr & { image: string };
  /** This request started the flow (the API's 201); false for a repeat (200). */
  created: boolean;
  /** The flow was closed already: the same request again, answered from its state. */
  closed: boolean;
}

/**
 * One round trip: update-with-start creates the flow (or attaches to the running one) and waits
 * for its QR. Whether this request started the flow the update answers, comparing `requestId`
 * with the one in the flow's input. Refusals are Problems: not verified, a conflict, the
 * provider's refusal.
 */
export async function startDeposit(
  deps: FlowStarter,
  body: DepositBody,
  requestId: string = randomUUID(),
): Promise<DepositStart> {
  const { config, temporal, timings } = deps;
  const handleOf = depositHandles(temporal);
  // Whether a deposit exists for the txid, asked once and only when a rule would refuse.
  let repeat: Promise<boolean> | undefined;
  const isRepeat = () => {
    const { txid } = body;
    repeat ??= txid === undefined ? Promise.resolve(false) : workflowExists(handleOf(txid));
    return repeat;
  };
  const standing = await depositStandingOf(deps, body.client.cpf);
  await refuseUnverified(deps, standing, isRepeat);
  await refuseImpeded(deps, body.client.cpf, standing, isRepeat);
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
  await refuseOverDepositLimits(deps, input, standing);
  const handle = handleOf(input.txid);
  const masked = maskCpf(input.client.cpf);

  const outcome = await startOrAttach(temporal, qrCodeUpdate, [{ ...fingerprint, requestId }], {
    workflowType: 'depositWorkflow',
    options: {
      workflowId: handle.workflowId,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [input],
      staticSummary: escapeMarkdown(
        `Deposit ${formatBrl(input.amountCentavos)} — txid ${input.txid.slice(0, 8)}…, payer ${masked}`,
      ),
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
    refusal: (cause) =>
      cause instanceof ApplicationFailure && cause.type === DEPOSIT_FAILED
        ? depositRefused(cause.message)
        : undefined,
  });
  const started = { workflowId: handle.workflowId, txid: input.txid };
  if (!outcome.answered) {
    // The same deposit again, closed: its QR, if it ever had one.
    const state = await depositState(outcome.closed);
    if (!state.qr) throw depositRefused(state.reason);
    return { ...started, qr: await withQrImage(state.qr), created: false, closed: true };
  }
  const { qr, created } = outcome.answer;
  return { ...started, qr: await withQrImage(qr), created, closed: false };
}

/** 201 when this request started the flow, 200 for a repeat (same QR). */
function startRoute(r: Router, deps: ApiDeps) {
  route(r, depositOperations.create, async (req, res) => {
    const body = parseDepositBody('body', req.body);
    const { workflowId, txid, qr, created, closed } = await startDeposit(deps, body);
    if (closed) return res.status(200).json({ workflowId, ...qr });
    res
      .status(created ? 201 : 200)
      .location(`/v1/deposits/${txid}`)
      .json({ workflowId, ...qr });
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
  stateOf: (txid: string) => Promise<DepositState>,
) {
  route(r, depositOperations.resolution, async (req, res) => {
    const { txid } = parse(txidParamsSchema, 'path', req.params);
    const decision = parse(depositResolutionBodySchema, 'body', req.body);
    const state = await stateOf(txid);
    if (state.status !== 'held' || state.resolution) throw notHeld(state);
    // The proof the flow reads back before it counts the decision: the key that was checked.
    const decisionId = await recordApiKeyDecision(pool, principalOf(res).id, {
      workflowId: depositWorkflowId(txid),
      kind: 'deposit.resolution',
      ...decision,
    });
    try {
      res.json(
        await retryUpdateLostWithTask(() =>
          handleOf(txid).executeUpdate(resolutionUpdate, { args: [{ ...decision, decisionId }] }),
        ),
      );
    } catch (err) {
      // Decided by another request meanwhile: say what it is now.
      if (err instanceof WorkflowUpdateFailedError || isNotFound(err)) throw notHeld(await stateOf(txid));
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
      "Idempotent per txid: the same request again answers the same QR (201 the first time, 200 after). The same txid with another amount, payer or merchant is 409 `conflict`. A new deposit for a person whose verification is not `approved` is 409 `not-verified` (reason `not_verified`, with the person's `verification`), and nothing is created; a repeat of a deposit that exists is answered as before. A new deposit that would pass a limit the person set (PUT /v1/customers/{cpf}/deposit-limits) is 409 `deposit-limit-exceeded` (reason `deposit_limit_exceeded`, with the periods `exceeded` and the `remainingCentavos` of each), and nothing is created. A person the registry of impeded people names (or named, until an operator reinstates them) is 409 `impeded` (reason `impeded`, with `impeded.reason`, `since`, `until`); one an operator closed is 409 `customer-closed` (reason `closed`); the registry unreachable is 503 `eligibility-unavailable` with Retry-After (unless ELIGIBILITY_FAIL_CLOSED is false). `client.bankAccount`, when given, is the payer's own bank account (`ispb` 8 digits, `branch` 1-5 digits, `number` 1-20 digits, check digit included, no hyphen), registered as the person's. The fields it replaces, `client.bankispb`, `client.bankbranch` and `client.bankaccount`, are a 400 naming each and where it went (`renamed to client.bankAccount.ispb`).",
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
      "The QR code is its payload and a link to its PNG (`qr.imageUrl`), not the image. A deposit paid by someone else is `held` (reason `third_party_payer`) until an operator's `resolution`, kept in the state once decided.",
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
      'Only a `held` deposit takes one, once: `accept` credits it (`completed`), `return` ends it `to_return` (the money is to be sent back by hand). Answered once the new status is recorded. 409 `not-held` with its flowStatus otherwise.',
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
  startRoute(r, deps);

  const stateOf = async (txid: string) => {
    try {
      return await depositState(handleOf(txid));
    } catch (err) {
      if (isNotFound(err)) throw flowNotFound('deposit with this txid');
      throw err;
    }
  };

  route(r, depositOperations.state, async (req, res) => {
    const { txid } = parse(txidParamsSchema, 'path', req.params);
    res.json({ workflowId: depositWorkflowId(txid), state: depositStateView(await stateOf(txid)) });
  });

  resolutionRoute(r, deps.pool, handleOf, stateOf);

  route(r, depositOperations.qrCode, async (req, res) => {
    const { txid } = parse(txidParamsSchema, 'path', req.params);
    const state = await stateOf(txid);
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
