import { type WorkflowHandle, WorkflowUpdateFailedError } from '@temporalio/client';
import { Router } from 'express';
import type { z } from 'zod';
import { type DepositState, depositStateQuery, resolutionUpdate } from '../contracts/deposit';
import { type OnboardingState, onboardingStateQuery, reviewSignal } from '../contracts/onboarding';
import { getFlowRow } from '../db/backoffice-queues';
import { lockUntilCommit } from '../db/locks';
import { type NewOperatorAction, type OperatorActionName, recordAction } from '../db/operator-actions';
import { type GrantedBrands, maySeeFlow } from '../db/operator-brands';
import { recordDecision, sessionRef } from '../db/operator-decisions';
import type { Operator } from '../db/operators';
import { inTransaction, type Pool } from '../db/pool';
import { isTemporalUnavailable } from '../http/problem';
import { flowState, isNotFound, retryUpdateLostWithTask } from '../starters/workflow-calls';
import type { BackofficeDeps } from './deps';
import { parseForm, resolutionFormSchema, reviewFormSchema } from './forms';
import { type Catalog, labelsFor } from './i18n';
import { grantedOf } from './operators';
import { BackofficeError, notFoundPage, redirectSaved, signedIn, wordsOf } from './render';
import { roleAtLeast } from './roles';

// Operators' decisions, through the same signal and update the API uses. One decision per case
// at a time (an advisory lock per flow, across API processes): the second operator reads the
// state the first one left and is told it was decided, and nothing is sent. Every attempt, taken
// or not, is a row of the audit trail.

const casePath = (id: string) => `/backoffice/flows/${encodeURIComponent(id)}`;

type Audit = Omit<NewOperatorAction, 'operatorId' | 'operatorEmail' | 'operatorRole'>;

const auditOf = (operator: Operator, a: Audit): NewOperatorAction => ({
  ...a,
  operatorId: operator.id,
  operatorEmail: operator.email,
  operatorRole: operator.role,
});

/**
 * Runs `decide` holding the case's lock; its audit row, a conflict's too, is written before the
 * lock is let go.
 */
async function decideUnderCaseLock(
  pool: Pool,
  operator: Operator,
  caseId: string,
  decide: () => Promise<Audit>,
) {
  const outcome = await inTransaction(pool, async (client) => {
    await lockUntilCommit(client, `backoffice:${caseId}`);
    const result = await decide().catch((err) => {
      if (err instanceof Decided) return err;
      throw err;
    });
    await recordAction(client, auditOf(operator, result instanceof Decided ? result.audit : result));
    return result;
  });
  if (outcome instanceof Decided) throw outcome;
  return outcome;
}

/** The case was no longer open to this decision: a 409 page, audited as a conflict. */
class Decided extends BackofficeError {
  constructor(
    readonly audit: Audit,
    now: (t: Catalog) => string,
    back: string,
  ) {
    super(
      409,
      (t) => ({ heading: t.errors.alreadyDecided, message: t.errors.alreadyDecidedText(now(t)) }),
      [],
      back,
    );
  }
}

function refuseRole(operator: Operator, action: OperatorActionName, caseId: string, pool: Pool) {
  if (roleAtLeast(operator.role, 'reviewer')) return Promise.resolve();
  return recordAction(pool, auditOf(operator, { action, outcome: 'refused', caseType: 'flow', caseId })).then(
    () => {
      throw new BackofficeError(
        403,
        (t) => ({
          heading: t.errors.notAllowed,
          message: t.errors.mayNotDecide(labelsFor(t.lang).role(operator.role)),
        }),
        [],
        casePath(caseId),
      );
    },
  );
}

/**
 * Polls the flow's state until `done` (the decision applied), for at most 10 s. The decision is
 * sent by now, so its audit row must be written: should Temporal stop answering (the request's
 * deadline), the last state read stands for the one after.
 */
export async function stateOnceSettled<S>(
  read: () => Promise<S>,
  done: (s: S) => boolean,
  last: S,
): Promise<S> {
  const until = Date.now() + 10_000;
  for (;;) {
    try {
      last = await read();
    } catch (err) {
      if (isTemporalUnavailable(err)) return last;
      throw err;
    }
    if (done(last) || Date.now() > until) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The flow to decide; another brand's, as one of another type, is not found. */
async function flowOf(pool: Pool, id: string, type: 'onboarding' | 'deposit', granted: GrantedBrands) {
  const flow = await getFlowRow(pool, id);
  if (!flow || flow.type !== type || !maySeeFlow(granted, flow))
    throw notFoundPage((t) => t.errors.what.flowOfType(labelsFor(t.lang).flowType(type).toLowerCase()));
  return flow;
}

export function decisionRoutes(deps: BackofficeDeps) {
  const r = Router();
  decisionRoute(r, deps, review);
  decisionRoute(r, deps, resolution);
  return r;
}

interface DecisionForm {
  decision: string;
  reason: string;
}

/** What one case's decision needs done: the rest (role, form, lock, audit) is the same for all. */
interface DecisionKind<F extends DecisionForm> {
  path: string;
  flowType: 'onboarding' | 'deposit';
  /** The audit's action for an attempt the role may not make, and for each decision. */
  attempt: OperatorActionName;
  actionOf(form: F): OperatorActionName;
  schema: z.ZodType<F>;
  /**
   * Reads the flow, sends the decision and reads it again: the states before and after for the
   * audit. `conflict` makes the refusal when the case was no longer open to it.
   */
  decide(
    handle: WorkflowHandle,
    decision: F & { by: string },
    conflict: (now: OnboardingState | DepositState, seen: unknown, after?: unknown) => Decided,
    /** Records the decision the flow reads back before it counts it; answers its id. */
    prove: () => Promise<string>,
  ): Promise<{ before: unknown; after: { status: string } }>;
  done(form: F, status: string, t: Catalog): string;
}

function decisionRoute<F extends DecisionForm>(
  r: Router,
  { pool, temporal }: BackofficeDeps,
  kind: DecisionKind<F>,
) {
  r.post(`/flows/:id/${kind.path}`, async (req, res) => {
    const operator = signedIn(res);
    const id = req.params.id ?? '';
    const t = wordsOf(req, res);
    // Another brand's flow is not found before anything else: not even a refusal is written of it.
    const granted = grantedOf(res);
    const seen = await getFlowRow(pool, id);
    if (seen && !maySeeFlow(granted, seen)) await flowOf(pool, id, kind.flowType, granted);
    await refuseRole(operator, kind.attempt, id, pool);
    const form = parseForm(kind.schema, req.body, casePath(id), t);
    await flowOf(pool, id, kind.flowType, granted);
    const base = {
      action: kind.actionOf(form),
      caseType: 'flow',
      caseId: id,
      reason: form.reason,
    };
    const conflict = (now: OnboardingState | DepositState, before: unknown, after?: unknown) =>
      new Decided(
        { ...base, outcome: 'conflict', before, after },
        describeDecided(kind.flowType, now),
        casePath(id),
      );
    const audit = await decideUnderCaseLock(pool, operator, id, async () => {
      const by = operator.email;
      // Committed on the pool, not in the lock's transaction: the flow's worker reads it.
      const prove = () =>
        recordDecision(pool, {
          workflowId: id,
          kind: kind.attempt === 'onboarding.review' ? 'onboarding.review' : 'deposit.resolution',
          decision: form.decision,
          reason: form.reason,
          operatorId: operator.id,
          operatorEmail: by,
          operatorRole: operator.role,
          authenticatedBy: sessionRef(req.sessionID),
        });
      const seen = await kind.decide(temporal.workflow.getHandle(id), { ...form, by }, conflict, prove);
      return { ...base, outcome: 'done', ...seen };
    });
    const status = labelsFor(t.lang).status(kind.flowType, statusIn(audit.after)).toLowerCase();
    req.session.flash = { kind: 'ok', text: kind.done(form, status, t) };
    await redirectSaved(req, res, casePath(id));
  });
}

/** An onboarding awaiting review: the `review` signal, as POST /v1/onboardings/:cpf/review sends it. */
const review: DecisionKind<z.infer<typeof reviewFormSchema>> = {
  path: 'review',
  flowType: 'onboarding',
  attempt: 'onboarding.review',
  actionOf: (form) => (form.decision === 'approve' ? 'onboarding.approve' : 'onboarding.refuse'),
  schema: reviewFormSchema,
  async decide(handle, decision, conflict, prove) {
    const stateOf = () => flowState(handle, onboardingStateQuery);
    const before = await stateOf();
    const seen = { status: before.status, review: before.review };
    if (before.status !== 'awaiting_review' || before.review) throw conflict(before, seen);
    await handle.signal(reviewSignal, {
      decision: decision.decision,
      by: decision.by,
      reason: decision.reason,
      decisionId: await prove(),
    });
    const after = await stateOnceSettled(stateOf, (s) => s.status !== 'awaiting_review', before);
    const now = { status: after.status, review: after.review };
    const mine =
      after.review?.by === decision.by &&
      after.review.reason === decision.reason &&
      after.review.decision === decision.decision;
    // An API caller's review that reached the flow first wins; ours was ignored.
    if (after.review && !mine) throw conflict(after, seen, now);
    return { before: seen, after: now };
  },
  done: (form, status, t) => t.flow.recorded[form.decision](status),
};

/** A held deposit: the `resolution` update, as POST /v1/deposits/:txid/resolution sends it. */
const resolution: DecisionKind<z.infer<typeof resolutionFormSchema>> = {
  path: 'resolution',
  flowType: 'deposit',
  attempt: 'deposit.resolution',
  actionOf: (form) => (form.decision === 'accept' ? 'deposit.accept' : 'deposit.return'),
  schema: resolutionFormSchema,
  async decide(handle, decision, conflict, prove) {
    const stateOf = () => flowState(handle, depositStateQuery);
    const before = await stateOf();
    const seen = { status: before.status, resolution: before.resolution };
    if (before.status !== 'held' || before.resolution) throw conflict(before, seen);
    const decisionId = await prove();
    try {
      await retryUpdateLostWithTask(() =>
        handle.executeUpdate(resolutionUpdate, {
          args: [{ decision: decision.decision, by: decision.by, reason: decision.reason, decisionId }],
        }),
      );
    } catch (err) {
      // Decided by an API call between our read and the update: the validator refused ours.
      if (err instanceof WorkflowUpdateFailedError || isNotFound(err)) throw conflict(await stateOf(), seen);
      throw err;
    }
    const after = await stateOnceSettled(stateOf, (s) => s.status !== 'held', before);
    return { before: seen, after: { status: after.status, resolution: after.resolution } };
  },
  done: (form, status, t) => t.flow.recorded[form.decision](status),
};

const statusIn = (after: unknown) => String((after as { status?: string } | undefined)?.status ?? 'unknown');

/** The state a case was found in, in words: its status, and who decided what and why. */
const describeDecided =
  (type: 'onboarding' | 'deposit', s: OnboardingState | DepositState) =>
  (t: Catalog): string => {
    const label = labelsFor(t.lang);
    const status = label.status(type, s.status).toLowerCase();
    const by =
      'review' in s && s.review ? s.review : 'resolution' in s && s.resolution ? s.resolution : undefined;
    return by
      ? `${status} (${t.flow.decidedBy(label.decision(by.decision), by.by, `“${by.reason}”`)})`
      : status;
  };
