import { randomBytes, randomUUID } from 'node:crypto';
import { type Request, type Response, Router } from 'express';
import { qrDataUrl } from '../../common/qr-image';
import {
  type LivenessRequest,
  type LivenessResponse,
  livenessRequestSchema,
  type StatusVerification,
} from '../../connectors/identity-payments/wire/schemas';
import { isoNow, type SandboxContext } from '../context';
import { sideOf } from '../dialect';
import { faultGate, parseBody, requireToken, sendError } from '../http';
import { personFor } from '../kyc-data';
import type { LivenessSession } from '../state';
import { lookupTestDocument, type TestDocument } from '../test-documents';
import { livenessDocumentOrError } from './documents';

// POST /kyc-liveness/:document and the liveness page GET /liveness/:sessionId.
//
// Sandbox choices ("not shown" in the contract):
// - status_onboarding values: requested -> in_progress -> approved | rejected_document_validation |
//   rejected_proof_of_life | under_review -> (approved | refused); biometric sessions end
//   biometric_approved | biometric_failed.
// - The request field is correlation_id, or correlationId under the dialect's
//   `liveness.correlation` `other` (each refuses the other spelling); the answer echoes correlation_id.
// - The kyc object does not depend on the plan.
// - A new call while the document's session is open (not finished, younger than the validity) returns
//   the same action.url with a new transaction_id; the correlation_id/event of the latest call are kept.
// - After an approved onboarding (completed or manual_approved) the next session is biometric_identification;
//   after a rejected or still-pending onboarding a new call opens a new onboarding.
// - Callbacks (livenessCallbackSchema) go to the registered liveness URL on every state change made
//   through the control endpoints (in_progress/processing, then the outcome; review decisions).

function baseUrl(ctx: SandboxContext, req: Request): string {
  return ctx.options.livenessUrl ?? `${req.protocol}://${req.get('host')}`;
}

function livenessKyc(ctx: SandboxContext, doc: TestDocument) {
  const p = personFor(doc, ctx.options.now());
  return {
    cpf: doc.cpf,
    name: p.name,
    is_under_18: p.isUnder18,
    status: p.status === null ? null : p.status.toUpperCase(),
    status_code: p.statusCode,
    date_death: p.dateDeath,
    is_pep: p.isPep,
    response_at: isoNow(ctx),
    response_token_validation: randomBytes(12).toString('hex'),
    mother_name: p.motherName,
    birth_date: `${p.birthDate}T00:00:00.000Z`,
    age: p.age,
    internal_status: p.internalStatus,
    internal_status_code: p.internalStatusCode,
    gender: p.gender,
    address: {
      street: p.address.street,
      number: p.address.number,
      complement: p.address.complement,
      neighborhood: p.address.neighborhood,
      city: p.address.city,
      state: p.address.state,
      zip_code: p.address.zip_code,
      country: p.address.country,
    },
  };
}

function isOpen(ctx: SandboxContext, s: LivenessSession): boolean {
  return !s.finished && ctx.options.now() < s.expiresAtMs;
}

export function findSession(
  ctx: SandboxContext,
  by: { sessionId?: string | undefined; document?: string | undefined },
): LivenessSession | undefined {
  if (by.sessionId) return ctx.state.liveness.get(by.sessionId);
  let latest: LivenessSession | undefined;
  for (const s of ctx.state.liveness.values()) {
    if (s.document === by.document && (!latest || s.createdAtMs >= latest.createdAtMs)) latest = s;
  }
  return latest;
}

function setStatus(
  ctx: SandboxContext,
  s: LivenessSession,
  statusOnboarding: string,
  statusVerification: StatusVerification,
): void {
  s.statusOnboarding = statusOnboarding;
  s.statusVerification = statusVerification;
  ctx.notifier.send('liveness', {
    transaction_id: s.transactionId,
    correlation_id: s.correlationId,
    document: s.document,
    status_verification: statusVerification,
    status_onboarding: statusOnboarding,
    action_type: s.actionType,
    event: s.event,
    datetime: isoNow(ctx),
  });
}

export type LivenessControlResult =
  | { ok: true; session: LivenessSession }
  | { ok: false; status: number; message: string };

/** The user finished the flow: the outcome follows the document's designated behaviour. */
export function completeLiveness(ctx: SandboxContext, s: LivenessSession | undefined): LivenessControlResult {
  if (!s) return { ok: false, status: 404, message: 'liveness session not found' };
  if (!isOpen(ctx, s))
    return { ok: false, status: 409, message: 'liveness session already finished or expired' };
  s.finished = true;
  setStatus(ctx, s, 'in_progress', 'processing');
  const outcome = ctx.state.livenessChanges.get(s.document) ?? lookupTestDocument(s.document).liveness;
  if (s.actionType === 'biometric_identification') {
    if (outcome === 'approved_biometrics_fail') setStatus(ctx, s, 'biometric_failed', 'failed');
    else setStatus(ctx, s, 'biometric_approved', 'completed');
    return { ok: true, session: s };
  }
  switch (outcome) {
    case 'approved_biometrics_pass':
    case 'approved_biometrics_fail':
      ctx.state.onboarded.add(s.document);
      setStatus(ctx, s, 'approved', 'completed');
      break;
    case 'rejected_document':
      setStatus(ctx, s, 'rejected_document_validation', 'failed');
      break;
    case 'rejected_proof_of_life':
      setStatus(ctx, s, 'rejected_proof_of_life', 'failed');
      break;
    default:
      setStatus(ctx, s, 'under_review', 'manual_approve_pending');
  }
  return { ok: true, session: s };
}

/** An operator decides a pending manual review. */
export function reviewLiveness(
  ctx: SandboxContext,
  s: LivenessSession | undefined,
  decision: 'approve' | 'refuse',
): LivenessControlResult {
  if (!s) return { ok: false, status: 404, message: 'liveness session not found' };
  if (s.statusVerification !== 'manual_approve_pending') {
    return {
      ok: false,
      status: 409,
      message: `session is ${s.statusVerification}, not manual_approve_pending`,
    };
  }
  if (decision === 'approve') {
    ctx.state.onboarded.add(s.document);
    setStatus(ctx, s, 'approved', 'manual_approved');
  } else {
    setStatus(ctx, s, 'refused', 'manual_refused');
  }
  return { ok: true, session: s };
}

/** A new session (and its page) for a document with none open: onboarding, or biometrics once onboarded. */
async function openSession(
  ctx: SandboxContext,
  pagesBaseUrl: string,
  document: string,
  body: LivenessRequest,
  now: number,
): Promise<LivenessSession> {
  const { options, state } = ctx;
  const id = randomUUID();
  const url = `${pagesBaseUrl}/liveness/${id}`;
  const session: LivenessSession = {
    id,
    document,
    plan: body.plan,
    actionType: state.onboarded.has(document) ? 'biometric_identification' : 'onboarding',
    url,
    qrcode: await qrDataUrl(url),
    createdAtMs: now,
    expiresAtMs: now + options.livenessUrlValidityMs,
    finished: false,
    statusOnboarding: 'requested',
    statusVerification: 'requested',
    correlationId: body.correlation_id,
    transactionId: '',
    event: body.event,
    redirectUrl: body.redirectUrl,
  };
  state.liveness.set(id, session);
  return session;
}

/** What NestJS's validation answers a body without the camel-case field (the `other` side's 400). */
const CORRELATION_ID_MISSING = ['correlationId should not be empty', 'correlationId must be a string'];

/**
 * The request in the dialect's spelling (`liveness.correlation`): `doc` requires correlation_id,
 * `other` correlationId, refusing a body that carries only correlation_id with the NestJS 400 (the
 * same shape as the document's deceased-or-under-age error). Undefined once a 400 has been sent.
 */
function livenessRequestOf(ctx: SandboxContext, raw: unknown, res: Response): LivenessRequest | undefined {
  if (sideOf(ctx, 'liveness.correlation') === 'doc') return parseBody(livenessRequestSchema, raw, res);
  const { correlationId, correlation_id: _snake, ...rest } = (raw ?? {}) as Record<string, unknown>;
  if (typeof correlationId !== 'string' || correlationId === '') {
    const messages =
      correlationId === undefined || correlationId === ''
        ? CORRELATION_ID_MISSING
        : CORRELATION_ID_MISSING.slice(1);
    sendError(res, 400, 'Bad Request', messages);
    return undefined;
  }
  return parseBody(livenessRequestSchema, { ...rest, correlation_id: correlationId }, res);
}

export function livenessRoutes(ctx: SandboxContext): Router {
  const router = Router();

  router.post(
    '/kyc-liveness/:document',
    faultGate(ctx, 'liveness'),
    requireToken(ctx, 'bare'),
    async (req, res) => {
      const body = livenessRequestOf(ctx, req.body, res);
      if (!body) return;
      const document = String(req.params.document);
      const doc = livenessDocumentOrError(ctx, res, document);
      if (!doc) return;
      const now = ctx.options.now();
      const current = findSession(ctx, { document });
      const session =
        current && isOpen(ctx, current)
          ? current
          : await openSession(ctx, baseUrl(ctx, req), document, body, now);
      session.transactionId = randomUUID();
      session.correlationId = body.correlation_id;
      session.event = body.event;
      const target = ctx.notifier.targetFor('liveness');
      const response: LivenessResponse = {
        correlation_id: body.correlation_id,
        transaction_id: session.transactionId,
        status_onboarding: session.statusOnboarding,
        status_verification: session.statusVerification,
        event: body.event,
        action: { url: session.url, qrcode: session.qrcode, type: session.actionType },
        url_callback: { sent: target ? [{ url: target.url, correlation_id: body.correlation_id }] : [] },
        datetime: new Date(now).toISOString(),
        kyc: livenessKyc(ctx, doc),
      };
      res.json(response);
    },
  );

  router.get('/liveness/:sessionId', (req, res) => {
    const s = ctx.state.liveness.get(String(req.params.sessionId));
    const open = s ? isOpen(ctx, s) : false;
    const title = !s ? 'Unknown session' : open ? 'Liveness check (sandbox)' : 'This link has expired';
    const detail = !s
      ? 'No liveness session has this address.'
      : open
        ? `Flow: ${s.actionType}. In the sandbox, finish it with POST /sandbox/liveness/complete {"sessionId":"${s.id}"}.`
        : `Status: ${s.statusVerification}.`;
    res
      .status(s ? 200 : 404)
      .type('html')
      .send(
        `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head>` +
          `<body><h1>${title}</h1><p>${detail}</p></body></html>`,
      );
  });

  return router;
}
