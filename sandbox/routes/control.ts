import { type Response, Router } from 'express';
import { z } from 'zod';
import type { SandboxContext } from '../context';
import { dialectOf, dialectSchema, sidesOf } from '../dialect';
import { applyFaultsPatch, defaultFaults, faultsPatchSchema } from '../faults';
import { parseBody, sendError } from '../http';
import { resetState } from '../state';
import { kycOutcomes, livenessOutcomes } from '../test-documents';
import { depositInquiry, payDeposit } from './deposits';
import { completeLiveness, findSession, reviewLiveness } from './liveness';
import { finishWithdrawal, withdrawalInquiry } from './withdrawals';

// Control endpoints under /sandbox (JSON bodies validated with zod). Not part of the provider.

const registerSchema = z
  .object({
    url: z.url({ protocol: /^https?$/ }),
    partnerId: z.string().min(1),
    /** Omitted: one URL for all points. */
    points: z
      .array(z.enum(['deposit', 'withdraw', 'liveness']))
      .min(1)
      .optional(),
  })
  .strict();
// The inquiry's payer fields may be empty (the contract says so): `payerCpf: ""` pays without one.
// `dropNotification`: paid, but its notification is lost, so only a look at the inquiry finds it
// (which deposit lost one is known, unlike with the `dropNext` fault that takes the next messages).
const paySchema = z
  .object({
    payerName: z.string().min(1),
    payerCpf: z.string().regex(/^(\d{11})?$/, 'must be 11 digits or empty'),
    dropNotification: z.boolean(),
  })
  .partial()
  .strict();
const failSchema = z.object({ reason: z.string().min(1).default('sandbox: payout failed') }).strict();
const sessionRef = z
  .object({ sessionId: z.string().min(1).optional(), document: z.string().min(1).optional() })
  .refine((v) => v.sessionId !== undefined || v.document !== undefined, 'give sessionId or document');
const reviewSchema = z.intersection(sessionRef, z.object({ decision: z.enum(['approve', 'refuse']) }));
const autoSchema = z
  .object({
    payDepositsAfterMs: z.number().int().min(0).nullable(),
    settleWithdrawalsAfterMs: z.number().int().min(0).nullable(),
  })
  .partial()
  .strict();

type ControlResult<T> = ({ ok: true } & T) | { ok: false; status: number; message: string };

/** A control action's refusal as a 'Sandbox' error, or `view` of what it acted on. */
function sendResult<T>(res: Response, r: ControlResult<T>, view: (done: T) => unknown): void {
  if (r.ok) res.json(view(r));
  else sendError(res, r.status, 'Sandbox', r.message);
}

/** Where the sandbox delivers its notifications (per point, or one URL for all). */
function notificationTargetRoutes(ctx: SandboxContext): Router {
  const router = Router();
  const { state } = ctx;
  router.post('/sandbox/notifications', (req, res) => {
    const body = parseBody(registerSchema, req.body, res);
    if (!body) return;
    for (const point of body.points ?? (['deposit', 'withdraw', 'liveness'] as const)) {
      state.targets[point] = { url: body.url, partnerId: body.partnerId };
    }
    res.json({ targets: state.targets });
  });
  router.delete('/sandbox/notifications', (_req, res) => {
    state.targets = {};
    res.json({ targets: state.targets });
  });
  router.post('/sandbox/notifications/flush', (_req, res) => {
    ctx.notifier.flush();
    res.json({ ok: true });
  });
  return router;
}

/** The payer and the bank: pay a deposit, settle or fail a payout, by hand or automatically. */
function settlementRoutes(ctx: SandboxContext): Router {
  const router = Router();
  router.post('/sandbox/deposits/:txid/pay', (req, res) => {
    const body = parseBody(paySchema, req.body, res);
    if (!body) return;
    sendResult(res, payDeposit(ctx, String(req.params.txid), body), (done) =>
      depositInquiry(ctx, done.deposit),
    );
  });
  router.post('/sandbox/withdrawals/:transactionId/settle', (req, res) => {
    const r = finishWithdrawal(ctx, String(req.params.transactionId), { status: 'completed' });
    sendResult(res, r, (done) => withdrawalInquiry(done.withdrawal));
  });
  router.post('/sandbox/withdrawals/:transactionId/fail', (req, res) => {
    const body = parseBody(failSchema, req.body, res);
    if (!body) return;
    const r = finishWithdrawal(ctx, String(req.params.transactionId), {
      status: 'failed',
      reason: body.reason,
    });
    sendResult(res, r, (done) => withdrawalInquiry(done.withdrawal));
  });
  router.post('/sandbox/auto', (req, res) => {
    const body = parseBody(autoSchema, req.body, res);
    if (!body) return;
    ctx.state.auto = { ...ctx.state.auto, ...body };
    res.json(ctx.state.auto);
  });
  return router;
}

const kycChangeSchema = z.object({ outcome: z.enum(kycOutcomes) });
const livenessChangeSchema = z.object({ outcome: z.enum(livenessOutcomes) });

/** The user and the operator: finish a liveness flow, decide a manual review. */
function livenessControlRoutes(ctx: SandboxContext): Router {
  const router = Router();
  // The registry changes its mind about a person (suspended, deceased, ...): later KYC calls say so.
  router.post('/sandbox/documents/:cpf/kyc', (req, res) => {
    const body = parseBody(kycChangeSchema, req.body, res);
    if (!body) return;
    ctx.state.kycChanges.set(String(req.params.cpf), body.outcome);
    res.json({ cpf: String(req.params.cpf), kyc: body.outcome });
  });
  // Any CPF behaves as a test document of this liveness outcome when its user finishes the flow
  // (e.g. `approved_biometrics_pass`: onboarded without a manual review), for loads of many people.
  router.post('/sandbox/documents/:cpf/liveness', (req, res) => {
    const body = parseBody(livenessChangeSchema, req.body, res);
    if (!body) return;
    ctx.state.livenessChanges.set(String(req.params.cpf), body.outcome);
    res.json({ cpf: String(req.params.cpf), liveness: body.outcome });
  });
  router.post('/sandbox/liveness/complete', (req, res) => {
    const body = parseBody(sessionRef, req.body, res);
    if (!body) return;
    sendResult(res, completeLiveness(ctx, findSession(ctx, body)), (done) => done.session);
  });
  router.post('/sandbox/liveness/review', (req, res) => {
    const body = parseBody(reviewSchema, req.body, res);
    if (!body) return;
    sendResult(res, reviewLiveness(ctx, findSession(ctx, body), body.decision), (done) => done.session);
  });
  return router;
}

/** Trouble on demand: revoked tokens and the fault knobs of ../faults. */
function faultRoutes(ctx: SandboxContext): Router {
  const router = Router();
  const { state } = ctx;
  router.post('/sandbox/tokens/revoke', (_req, res) => {
    const revoked = state.tokens.size;
    state.tokens.clear();
    res.json({ revoked });
  });
  router.get('/sandbox/faults', (_req, res) => {
    res.json(state.faults);
  });
  router.post('/sandbox/faults', (req, res) => {
    const body = parseBody(faultsPatchSchema, req.body, res);
    if (!body) return;
    state.faults = applyFaultsPatch(state.faults, body);
    res.json(state.faults);
  });
  router.delete('/sandbox/faults', (_req, res) => {
    state.faults = defaultFaults();
    res.json(state.faults);
  });
  return router;
}

/**
 * Which side of each open point the provider endpoints answer: read it, or put another in place
 * (`{default, points}`, the whole dialect) on a running sandbox; a reset comes back to the
 * configured one (SANDBOX_DIALECT).
 */
function dialectRoutes(ctx: SandboxContext): Router {
  const router = Router();
  const view = () => ({ ...ctx.state.dialect, sides: sidesOf(ctx.state.dialect) });
  router.get('/sandbox/dialect', (_req, res) => {
    res.json(view());
  });
  router.put('/sandbox/dialect', (req, res) => {
    const body = parseBody(dialectSchema, req.body, res);
    if (!body) return;
    ctx.state.dialect = dialectOf(body);
    res.json(view());
  });
  router.delete('/sandbox/dialect', (_req, res) => {
    const { dialect } = ctx.options;
    ctx.state.dialect = { default: dialect.default, points: { ...dialect.points } };
    res.json(view());
  });
  return router;
}

/** Everything the sandbox holds, to read (tests, people) or to forget at once. */
function stateRoutes(ctx: SandboxContext): Router {
  const router = Router();
  const { state } = ctx;
  router.post('/sandbox/reset', (_req, res) => {
    ctx.timers.clearAll();
    ctx.notifier.reset();
    resetState(state, ctx.options.notificationTarget, ctx.options.dialect);
    res.json({ ok: true });
  });
  router.get('/sandbox/state', (_req, res) => {
    res.json({
      counters: state.counters,
      tokensActive: state.tokens.size,
      targets: state.targets,
      auto: state.auto,
      faults: state.faults,
      dialect: state.dialect,
      deposits: [...state.deposits.values()].map((d) => depositInquiry(ctx, d)),
      withdrawals: [...state.withdrawals.values()].map((w) => withdrawalInquiry(w)),
      liveness: [...state.liveness.values()].map(({ qrcode: _qrcode, ...s }) => s),
      notifications: state.notifications,
    });
  });
  return router;
}

export function controlRoutes(ctx: SandboxContext): Router {
  return Router().use(
    notificationTargetRoutes(ctx),
    settlementRoutes(ctx),
    livenessControlRoutes(ctx),
    faultRoutes(ctx),
    dialectRoutes(ctx),
    stateRoutes(ctx),
  );
}
