import { WorkflowUpdateFailedError } from '@temporalio/client';
import { type Response, Router } from 'express';
import { type DepositState, depositStateQuery, resolutionUpdate } from '../../contracts/deposit';
import { type OnboardingState, onboardingStateQuery, reviewSignal } from '../../contracts/onboarding';
import { getFlowRow } from '../../db/backoffice-queues';
import { type NewOperatorAction, recordAction } from '../../db/operator-actions';
import type { Operator } from '../../db/operators';
import { inTransaction, type Pool } from '../../db/pool';
import type { ApiDeps } from '../deps';
import { isNotFound } from '../route-helpers';
import { askAgainIfLost } from '../start-flow';
import { parseForm, resolutionFormSchema, reviewFormSchema } from './forms';
import { BackofficeError, notFoundPage, signedIn } from './render';
import { roleAtLeast } from './session';

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
async function oneAtATime(pool: Pool, operator: Operator, caseId: string, decide: () => Promise<Audit>) {
  const outcome = await inTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`backoffice:${caseId}`]);
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
    now: string,
    back: string,
  ) {
    super(
      409,
      'Already decided',
      `Someone decided this case first: it is ${now}. Your decision was not sent.`,
      [],
      back,
    );
  }
}

function refuseRole(operator: Operator, action: string, caseId: string, pool: Pool) {
  if (roleAtLeast(operator.role, 'reviewer')) return Promise.resolve();
  return recordAction(pool, auditOf(operator, { action, outcome: 'refused', caseType: 'flow', caseId })).then(
    () => {
      throw new BackofficeError(
        403,
        'Not allowed',
        `Your role (${operator.role}) may look at cases but not decide them.`,
        [],
        casePath(caseId),
      );
    },
  );
}

/** Polls the flow's state until `done` (the signal applied), for at most 10 s. */
async function settled<S>(read: () => Promise<S>, done: (s: S) => boolean): Promise<S> {
  const until = Date.now() + 10_000;
  for (;;) {
    const s = await read();
    if (done(s) || Date.now() > until) return s;
    await new Promise((r) => setTimeout(r, 100));
  }
}

const flash = (res: Response, text: string) => {
  res.req.session.flash = { kind: 'ok', text };
};

async function flowOf(pool: Pool, id: string, type: string) {
  const flow = await getFlowRow(pool, id);
  if (!flow || flow.type !== type) throw notFoundPage(`${type} with this id`);
  return flow;
}

export function decisionRoutes(deps: ApiDeps) {
  const r = Router();
  reviewRoute(r, deps);
  resolutionRoute(r, deps);
  return r;
}

/** An onboarding awaiting review: the `review` signal, as POST /v1/onboardings/:cpf/review sends it. */
function reviewRoute(r: Router, { pool, temporal }: ApiDeps) {
  r.post('/flows/:id/review', async (req, res) => {
    const operator = signedIn(res);
    const id = req.params.id ?? '';
    await refuseRole(operator, 'onboarding.review', id, pool);
    const form = parseForm(reviewFormSchema, req.body, casePath(id));
    await flowOf(pool, id, 'onboarding');
    const handle = temporal.workflow.getHandle(id);
    const action = `onboarding.${form.decision}`;
    const stateOf = () => handle.query(onboardingStateQuery);
    const audit = await oneAtATime(pool, operator, id, async () => {
      const before = await stateOf();
      const seen = { status: before.status, review: before.review };
      if (before.status !== 'awaiting_review' || before.review) {
        throw new Decided(
          { action, outcome: 'conflict', caseType: 'flow', caseId: id, before: seen, reason: form.reason },
          describe(before),
          casePath(id),
        );
      }
      const decision = { decision: form.decision, by: operator.email, reason: form.reason };
      await handle.signal(reviewSignal, decision);
      const after = await settled(stateOf, (s: OnboardingState) => s.status !== 'awaiting_review');
      const mine =
        after.review?.by === operator.email &&
        after.review.reason === form.reason &&
        after.review.decision === form.decision;
      const now = { status: after.status, review: after.review };
      // An API caller's review that reached the flow first wins; ours was ignored.
      if (after.review && !mine)
        throw new Decided(
          {
            action,
            outcome: 'conflict',
            caseType: 'flow',
            caseId: id,
            before: seen,
            after: now,
            reason: form.reason,
          },
          describe(after),
          casePath(id),
        );
      return {
        action,
        outcome: 'done',
        caseType: 'flow',
        caseId: id,
        before: seen,
        after: now,
        reason: form.reason,
      };
    });
    flash(
      res,
      `Recorded: ${form.decision === 'approve' ? 'approved' : 'refused'}. The onboarding is ${statusIn(audit.after)}.`,
    );
    res.redirect(303, casePath(id));
  });
}

/** A held deposit: the `resolution` update, as POST /v1/deposits/:txid/resolution sends it. */
function resolutionRoute(r: Router, { pool, temporal }: ApiDeps) {
  r.post('/flows/:id/resolution', async (req, res) => {
    const operator = signedIn(res);
    const id = req.params.id ?? '';
    await refuseRole(operator, 'deposit.resolution', id, pool);
    const form = parseForm(resolutionFormSchema, req.body, casePath(id));
    await flowOf(pool, id, 'deposit');
    const handle = temporal.workflow.getHandle(id);
    const action = `deposit.${form.decision}`;
    const stateOf = () => handle.query(depositStateQuery);
    const audit = await oneAtATime(pool, operator, id, async () => {
      const before = await stateOf();
      const seen = { status: before.status, resolution: before.resolution };
      const decided = (s: DepositState) =>
        new Decided(
          { action, outcome: 'conflict', caseType: 'flow', caseId: id, before: seen, reason: form.reason },
          describe(s),
          casePath(id),
        );
      if (before.status !== 'held' || before.resolution) throw decided(before);
      try {
        await askAgainIfLost(() =>
          handle.executeUpdate(resolutionUpdate, {
            args: [{ decision: form.decision, by: operator.email, reason: form.reason }],
          }),
        );
      } catch (err) {
        // Decided by an API call between our read and the update: the validator refused ours.
        if (err instanceof WorkflowUpdateFailedError || isNotFound(err)) throw decided(await stateOf());
        throw err;
      }
      const after = await settled(stateOf, (s: DepositState) => s.status !== 'held');
      return {
        action,
        outcome: 'done',
        caseType: 'flow',
        caseId: id,
        before: seen,
        after: { status: after.status, resolution: after.resolution },
        reason: form.reason,
      };
    });
    flash(
      res,
      `Recorded: ${form.decision === 'accept' ? 'accepted' : 'to be returned'}. The deposit is ${statusIn(audit.after)}.`,
    );
    res.redirect(303, casePath(id));
  });
}

const statusIn = (after: unknown) => String((after as { status?: string } | undefined)?.status ?? 'unknown');

function describe(s: OnboardingState | DepositState): string {
  const by =
    'review' in s && s.review ? s.review : 'resolution' in s && s.resolution ? s.resolution : undefined;
  return by ? `${s.status} (${by.decision} by ${by.by}: “${by.reason}”)` : s.status;
}
