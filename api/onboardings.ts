import { WorkflowUpdateFailedError } from '@temporalio/client';
import { Router } from 'express';
import { brandOf, principalOf } from '../api-keys/authenticate';
import { cpfHash } from '../common/pii';
import {
  livenessLinkUpdate,
  type OnboardingState,
  onboardingStateQuery,
  onboardingWorkflowId,
  reviewSignal,
} from '../contracts/onboarding';
import { knowsCustomer, meetCustomer } from '../db/customer-brands';
import { recordApiKeyDecision } from '../db/operator-decisions';
import { type Operation, route } from '../http/operation';
import { Problem } from '../http/problem';
import { parse } from '../http/request-input';
import { startOnboarding } from '../starters/onboarding';
import { flowState, isNotFound, workflowExists } from '../starters/workflow-calls';
import type { onboardingWorkflow } from '../workflows/onboarding';
import { biometricLink } from './biometrics';
import type { ApiDeps } from './deps';
import { flowNotFound, pngBytes } from './flow-answers';
import {
  livenessLinkResponseSchema,
  type OnboardingStateView,
  onboardingBodySchema,
  onboardingResponseSchema,
  reviewAcceptedSchema,
  reviewBodySchema,
} from './onboardings-schemas';
import { cpfParamsSchema } from './schema-parts';

const onboardingFinished = (status: string) =>
  new Problem(409, 'flow-finished', 'Onboarding already finished', `the onboarding is ${status}`);

/** The state as the API answers it: the liveness link's QR code as a link to its PNG, not the image. */
function onboardingStateView(cpf: string, { link, ...state }: OnboardingState): OnboardingStateView {
  if (!link) return state;
  const { qrcode: _qrcode, ...rest } = link;
  return { ...state, link: { ...rest, qrcodeUrl: `/v1/onboardings/${cpf}/liveness-link/qrcode.png` } };
}

const noQrCode = (status: string) =>
  new Problem(
    404,
    'qrcode-not-found',
    'No QR code',
    `the onboarding is ${status} and has no liveness link QR code`,
  );

/** The onboarding routes, as /openapi.json describes them and in its order. */
export const onboardingOperations = {
  start: {
    operationId: 'createOnboarding',
    method: 'post',
    path: '/onboardings',
    tag: 'Onboarding',
    summary: 'Start an onboarding (idempotent per CPF)',
    description:
      'KYC, then liveness. 201 when started; 200 with the current state when one exists (an expired one starts over).',
    body: onboardingBodySchema,
    ok: [
      { status: 201, description: 'Started', schema: onboardingResponseSchema },
      { status: 200, description: 'Already exists', schema: onboardingResponseSchema },
    ],
    scopes: ['onboardings:write'],
  },
  state: {
    operationId: 'getOnboarding',
    method: 'get',
    path: '/onboardings/:cpf',
    tag: 'Onboarding',
    summary: 'Onboarding state',
    description: "The liveness link's QR code is a link to its PNG (`link.qrcodeUrl`), not the image.",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'Current state', schema: onboardingResponseSchema }],
    scopes: ['onboardings:read'],
  },
  livenessLink: {
    operationId: 'createLivenessLink',
    method: 'post',
    path: '/onboardings/:cpf/liveness-link',
    tag: 'Onboarding',
    summary: "The user's liveness link: the valid one again, or a new one",
    description:
      'While the onboarding runs, its liveness link. Once it is approved, a biometric identification link (`type` biometric_identification) from its own flow (`workflowId` biometrics-...), started or attached to: the same link while that identification runs (until its outcome, or 30 minutes), a new one after. 409 for a rejected or expired onboarding, or when the provider gives no biometric identification link.',
    params: cpfParamsSchema,
    ok: [
      {
        status: 200,
        description: 'The link; `reused` says whether an earlier ask was already given it',
        schema: livenessLinkResponseSchema,
      },
    ],
    errors: [409],
    scopes: ['onboardings:write'],
  },
  livenessLinkQrCode: {
    operationId: 'getLivenessLinkQrCode',
    method: 'get',
    path: '/onboardings/:cpf/liveness-link/qrcode.png',
    tag: 'Onboarding',
    summary: "The current liveness link's QR code image (404 while there is no link)",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'PNG image', png: true }],
    scopes: ['onboardings:read'],
  },
  review: {
    operationId: 'reviewOnboarding',
    method: 'post',
    path: '/onboardings/:cpf/review',
    tag: 'Onboarding',
    summary: 'Operator decision on an onboarding awaiting review',
    params: cpfParamsSchema,
    body: reviewBodySchema,
    ok: [{ status: 202, description: 'Decision delivered to the flow', schema: reviewAcceptedSchema }],
    errors: [409],
    scopes: ['onboardings:write'],
  },
} satisfies Record<string, Operation>;

/**
 * 201 when this request started the onboarding, 200 with the state of the one that exists. The
 * acting brand meets the person first (docs/brands.md, "People a brand knows"), so the person's
 * one onboarding, verified or in flight, is the brand's to read from then on.
 */
function startRoute(r: Router, deps: ApiDeps) {
  route(r, onboardingOperations.start, async (req, res) => {
    const body = parse(onboardingBodySchema, 'body', req.body);
    await meetCustomer(deps.pool, cpfHash(body.cpf, deps.config.PII_HASH_KEY), brandOf(res));
    const started = await startOnboarding(deps, body);
    res
      .status(started.outcome === 'started' ? 201 : 200)
      .location(`/v1/onboardings/${body.cpf}`)
      .json({ workflowId: started.workflowId, state: onboardingStateView(body.cpf, started.answer) });
  });
}

export function onboardingRoutes(deps: ApiDeps) {
  const { config, temporal, pool } = deps;
  const r = Router();
  const handleOf = (cpf: string) =>
    temporal.workflow.getHandle<typeof onboardingWorkflow>(
      onboardingWorkflowId(cpfHash(cpf, config.PII_HASH_KEY)),
    );
  /** A person the acting brand has not met is, to it, a CPF with no onboarding. */
  const requireKnown = async (cpf: string, brand: string) => {
    if (!(await knowsCustomer(pool, cpfHash(cpf, config.PII_HASH_KEY), brand))) {
      throw flowNotFound('onboarding for this CPF');
    }
  };

  startRoute(r, deps);

  const stateOf = async (cpf: string, brand: string) => {
    await requireKnown(cpf, brand);
    try {
      return await flowState(handleOf(cpf), onboardingStateQuery);
    } catch (err) {
      if (isNotFound(err)) throw flowNotFound('onboarding for this CPF');
      throw err;
    }
  };

  route(r, onboardingOperations.state, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const state = await stateOf(cpf, brandOf(res));
    res.json({
      workflowId: onboardingWorkflowId(cpfHash(cpf, config.PII_HASH_KEY)),
      state: onboardingStateView(cpf, state),
    });
  });

  route(r, onboardingOperations.livenessLinkQrCode, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const state = await stateOf(cpf, brandOf(res));
    const png = pngBytes(state.link?.qrcode);
    if (!png) throw noQrCode(state.status);
    // A renewal replaces the link: the image may change at any time.
    res.type('image/png').set('cache-control', 'private, no-cache').send(png);
  });

  route(r, onboardingOperations.livenessLink, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    await requireKnown(cpf, brandOf(res));
    const handle = handleOf(cpf);
    try {
      const { link, reused } = await handle.executeUpdate(livenessLinkUpdate);
      res.json({ ...link, reused, workflowId: handle.workflowId });
      return;
    } catch (err) {
      // The update's only refusal: the onboarding reached approved/rejected/expired. The flow
      // closes right after its final state: an update then finds no running workflow.
      const ended =
        err instanceof WorkflowUpdateFailedError || (isNotFound(err) && (await workflowExists(handle)));
      if (!ended && isNotFound(err)) throw flowNotFound('onboarding for this CPF');
      if (!ended) throw err;
    }
    // An approved person's later links are biometric identifications, in a flow of their own.
    const { status } = await flowState(handle, onboardingStateQuery);
    if (status !== 'approved') throw onboardingFinished(status);
    const { link, reused, workflowId } = await biometricLink(deps, cpf);
    res.json({ ...link, reused, workflowId });
  });

  route(r, onboardingOperations.review, async (req, res) => {
    const { cpf } = parse(cpfParamsSchema, 'path', req.params);
    const decision = parse(reviewBodySchema, 'body', req.body);
    const handle = handleOf(cpf);
    const { status } = await stateOf(cpf, brandOf(res));
    if (status !== 'awaiting_review') {
      throw new Problem(
        409,
        'not-awaiting-review',
        'Onboarding is not awaiting review',
        `the onboarding is ${status}`,
      );
    }
    // The proof the flow reads back before it counts the review: the key that was checked.
    const decisionId = await recordApiKeyDecision(deps.pool, principalOf(res).id, {
      workflowId: handle.workflowId,
      kind: 'onboarding.review',
      ...decision,
    });
    try {
      await handle.signal(reviewSignal, { ...decision, decisionId });
    } catch (err) {
      if (isNotFound(err)) throw onboardingFinished('closed');
      throw err;
    }
    res.status(202).json({ workflowId: handle.workflowId, ...decision });
  });

  return r;
}
