import { WorkflowUpdateFailedError } from '@temporalio/client';
import { Router } from 'express';
import { z } from 'zod';
import {
  PAYOUT_ALREADY_APPROVED_BY,
  PAYOUT_APPROVER_IS_REQUESTER,
  PAYOUT_NOT_AWAITING_APPROVAL,
  PAYOUT_REFUSAL_NEEDS_REASON,
  payoutDecisionUpdate,
  type WithdrawalState,
  withdrawalStateQuery,
} from '../contracts/withdrawal';
import type { FlowRow } from '../db/flows';
import { lockUntilCommit } from '../db/locks';
import { type NewOperatorAction, recordAction } from '../db/operator-actions';
import { maySeeFlow } from '../db/operator-brands';
import { recordDecision, sessionRef } from '../db/operator-decisions';
import type { Operator } from '../db/operators';
import {
  getPayout,
  listPayoutApprovals,
  listPayoutDeadlines,
  PAYOUT_APPROVALS_QUEUE,
  PAYOUT_DEADLINES_QUEUE,
  type PayoutItem,
  payoutOf,
} from '../db/payout-queues';
import { inTransaction } from '../db/pool';
import { flowState, isNotFound, retryUpdateLostWithTask } from '../starters/workflow-calls';
import { stateOnceSettled } from './decisions';
import type { BackofficeDeps } from './deps';
import { ageOf, type Formatter } from './format';
import { parseForm, say } from './forms';
import { type Catalog, labelsFor } from './i18n';
import { brandsFor, grantedOf } from './operators';
import { BackofficeError, notFoundPage, page, redirectSaved, signedIn, wordsOf } from './render';
import { roleAtLeast } from './roles';

// Large payouts' four eyes and every payout's prize deadline, as operators see them: the queue of
// payouts awaiting approval, the queue of open payouts by time left, and the approver's decision
// on a payout's page, sent through the withdrawal's own `decidePayout` update. The back office
// applies the update validator's rules before sending, so the operator reads a refusal at once;
// the validator stays the judge should two operators race. Every decision taken, and every one
// refused, is a row of the audit trail.

const PAGE_SIZE = 100;
const casePath = (id: string) => `/backoffice/flows/${encodeURIComponent(id)}`;

/** A length of time as the queues write ages ("4 min", "2 h 5 min"). */
export const durationOf = (ms: number, t: Catalog) =>
  ageOf(new Date(0).toISOString(), new Date(Math.max(0, ms)), t.age);

/** What a payout's deadline says now: time left or how late, and whether it is at risk or missed. */
export function deadlineOf(p: PayoutItem, t: Catalog, fmt: Formatter, now = Date.now()) {
  const w = t.payouts;
  if (!p.dueAt) return undefined;
  const late = Date.parse(p.dueAt) <= now;
  const state =
    p.deadlineState === 'missed' || late
      ? 'missed'
      : p.deadlineState === 'at_risk' || (p.atRiskAt !== null && Date.parse(p.atRiskAt) <= now)
        ? 'at_risk'
        : 'on_time';
  return {
    state,
    stateWords: state === 'missed' ? w.missed : state === 'at_risk' ? w.atRisk : w.onTime,
    left: late ? w.overdue(fmt.age(p.dueAt)) : w.left(fmt.left(p.dueAt)),
    // Elapsed since the request, apart: the person's step-up, and everything else.
    waitedForPerson: durationOf(p.waitedForPersonMs, t),
    withPixflow: durationOf(now - Date.parse(p.createdAt) - p.waitedForPersonMs, t),
  };
}

/** "1 of 2", with who approved; undefined when four eyes do not apply. */
export function approvalsOf(p: PayoutItem, t: Catalog) {
  if (p.approvalsRequired === null) return undefined;
  const n = t.payouts.approvalsOf(p.approvedBy.length, p.approvalsRequired);
  return p.approvedBy.length ? `${n} (${t.payouts.approvedBy(p.approvedBy.join(', '))})` : n;
}

/** The refusal the update's validator would give this decision, checked here first. */
function ruleRefusing(s: WithdrawalState, by: string, decision: 'approve' | 'refuse'): string | undefined {
  const a = s.approval;
  if (s.status !== 'awaiting_approval' || !a || a.refusedBy !== undefined || a.approvals.length >= a.required)
    return PAYOUT_NOT_AWAITING_APPROVAL;
  if (decision === 'refuse') return undefined;
  if (s.requestedBy?.toLowerCase() === by) return PAYOUT_APPROVER_IS_REQUESTER;
  if (a.approvals.some((x) => x.operator.toLowerCase() === by)) return PAYOUT_ALREADY_APPROVED_BY;
  return undefined;
}

/** The validator's refusal in the page's words. */
const refusalWords = (rule: string, s: WithdrawalState | undefined) => (t: Catalog) => {
  const w = t.payouts;
  const message =
    rule === PAYOUT_APPROVER_IS_REQUESTER
      ? w.isRequester
      : rule === PAYOUT_ALREADY_APPROVED_BY
        ? w.alreadyApproved
        : rule === PAYOUT_REFUSAL_NEEDS_REASON
          ? t.formErrors.mustSayWhy
          : w.notAwaiting(
              s ? labelsFor(t.lang).status('withdrawal', s.status).toLowerCase() : t.unknown.toLowerCase(),
            );
  return { heading: w.notDecided, message };
};

/** What a payout's page shows of four eyes and its deadline, and the decision it offers. */
export function payoutCaseOf(flow: FlowRow, operator: Operator, t: Catalog, fmt: Formatter) {
  const p = payoutOf(flow);
  const w = t.payouts;
  const facts: Array<[string, string]> = [];
  const deadline = deadlineOf(p, t, fmt);
  const open = !['completed', 'failed', 'stuck', 'refused'].includes(p.status);
  if (p.dueAt)
    facts.push([
      w.deadline,
      `${fmt.time(p.dueAt)}${open && deadline ? ` (${deadline.left}, ${deadline.stateWords})` : ''}`,
    ]);
  if (deadline && (open || p.waitedForPersonMs > 0))
    facts.push([w.waitedForPerson, deadline.waitedForPerson]);
  if (p.requestedBy) facts.push([w.requestedBy, p.requestedBy]);
  const approvals = approvalsOf(p, t);
  if (approvals) facts.push([w.approvals, approvals]);
  if (p.refusedBy) facts.push([w.refusedByLabel, w.refusedBy(p.refusedBy, p.refusal ?? '')]);
  const by = operator.email.toLowerCase();
  const awaiting = p.status === 'awaiting_approval';
  return {
    facts,
    awaiting,
    mayDecide: roleAtLeast(operator.role, 'approver'),
    // Said before the form, so an operator knows an approval of theirs would be refused.
    note:
      p.requestedBy?.toLowerCase() === by
        ? w.youRequested
        : p.approvedBy.some((a) => a.toLowerCase() === by)
          ? w.youApproved
          : undefined,
  };
}

const payoutDecisionFormSchema = z
  .object({
    decision: z.enum(['approve', 'refuse'], { error: say('decisionReview') }),
    reason: z
      .string({ error: say('text') })
      .trim()
      .max(1000, say('atMost', 1000))
      .optional(),
  })
  .superRefine((f, ctx) => {
    if (f.decision === 'refuse' && !f.reason)
      ctx.addIssue({ code: 'custom', path: ['reason'], message: say('mustSayWhy') });
  });

/** What an audit row keeps of a payout's state. */
const seenOf = (s: WithdrawalState | undefined) =>
  s && {
    status: s.status,
    approvals: s.approval?.approvals.map((a) => a.operator) ?? [],
    ...(s.approval?.refusedBy ? { refusedBy: s.approval.refusedBy } : {}),
  };

export function payoutRoutes(deps: BackofficeDeps) {
  const r = Router();
  for (const [queue, list, view] of [
    [PAYOUT_APPROVALS_QUEUE, listPayoutApprovals, 'payout-approvals'],
    [PAYOUT_DEADLINES_QUEUE, listPayoutDeadlines, 'payout-deadlines'],
  ] as const) {
    r.get(`/queues/${queue}`, async (req, res) => {
      const { items, total } = await list(deps.pool, PAGE_SIZE, brandsFor(res));
      page(req, res, view, { queue, items, total, deadlineOf, approvalsOf });
    });
  }
  r.post('/flows/:id/payout-decision', async (req, res) => {
    const operator = signedIn(res);
    const id = req.params.id ?? '';
    const back = casePath(id);
    const t = wordsOf(req, res);
    const notFound = () =>
      notFoundPage((w) => w.errors.what.flowOfType(labelsFor(w.lang).flowType('withdrawal').toLowerCase()));
    // Another brand's payout is not found before anything else: not even a refusal is written of it.
    const seen = await getPayout(deps.pool, id);
    const visible = seen && maySeeFlow(grantedOf(res), { type: 'withdrawal', brandId: seen.brandId });
    if (seen && !visible) throw notFound();
    await refuseBelowApprover(deps, operator, id);
    const form = parseForm(payoutDecisionFormSchema, req.body, back, t);
    if (!visible) throw notFound();
    const outcome = await sendDecision(deps, operator, id, form, sessionRef(req.sessionID));
    if ('rule' in outcome) throw new BackofficeError(409, refusalWords(outcome.rule, outcome.now), [], back);
    const { after } = outcome;
    const status = labelsFor(t.lang).status('withdrawal', after.status).toLowerCase();
    const approvals = after.approval?.approvals.length ?? 0;
    req.session.flash = {
      kind: 'ok',
      text:
        form.decision === 'approve'
          ? t.payouts.approvedDone(approvals, after.approval?.required ?? approvals, status)
          : t.payouts.refusedDone(status),
    };
    await redirectSaved(req, res, back);
  });
  return r;
}

const auditWho = (operator: Operator) => ({
  operatorId: operator.id,
  operatorEmail: operator.email,
  operatorRole: operator.role,
});

/** Below approver: a 403 page, the attempt audited. */
async function refuseBelowApprover({ pool }: BackofficeDeps, operator: Operator, id: string) {
  if (roleAtLeast(operator.role, 'approver')) return;
  await recordAction(pool, {
    ...auditWho(operator),
    action: 'withdrawal.decision',
    outcome: 'refused',
    caseType: 'flow',
    caseId: id,
  });
  throw new BackofficeError(
    403,
    (w) => ({
      heading: w.errors.notAllowed,
      message: w.payouts.mayNotDecide(labelsFor(w.lang).role(operator.role)),
    }),
    [],
    casePath(id),
  );
}

/**
 * Checks the four-eyes rules and sends the decision, holding the case's lock (the same as every
 * case's, across API processes); its audit row is written before the lock is let go. A refusal
 * (ours or the validator's) answers the rule it broke; nothing reached the flow then.
 */
function sendDecision(
  { pool, temporal }: BackofficeDeps,
  operator: Operator,
  id: string,
  form: z.infer<typeof payoutDecisionFormSchema>,
  authenticatedBy: string,
): Promise<{ rule: string; now: WithdrawalState | undefined } | { after: WithdrawalState }> {
  const by = operator.email.toLowerCase();
  const audit: Omit<NewOperatorAction, 'outcome'> = {
    ...auditWho(operator),
    action: form.decision === 'approve' ? 'withdrawal.approve' : 'withdrawal.refuse',
    caseType: 'flow',
    caseId: id,
    reason: form.reason || undefined,
  };
  return inTransaction(pool, async (client) => {
    await lockUntilCommit(client, `backoffice:${id}`);
    const handle = temporal.workflow.getHandle(id);
    const before = await flowState(handle, withdrawalStateQuery).catch((err) => {
      if (isNotFound(err)) return undefined;
      throw err;
    });
    const refuse = async (rule: string, now: WithdrawalState | undefined) => {
      const outcome = rule === PAYOUT_NOT_AWAITING_APPROVAL ? 'conflict' : 'refused';
      await recordAction(client, { ...audit, outcome, before: seenOf(before), after: seenOf(now) });
      return { rule, now };
    };
    if (!before) return refuse(PAYOUT_NOT_AWAITING_APPROVAL, undefined);
    const rule = ruleRefusing(before, by, form.decision);
    if (rule) return refuse(rule, before);
    const decision = { operator: by, decision: form.decision, reason: form.reason || undefined };
    // The proof the flow reads back before it counts the decision: committed now, on the pool.
    const decisionId = await recordDecision(pool, {
      workflowId: id,
      kind: 'withdrawal.decision',
      decision: form.decision,
      reason: decision.reason,
      operatorId: operator.id,
      operatorEmail: by,
      operatorRole: operator.role,
      authenticatedBy,
    });
    let answered: WithdrawalState;
    try {
      answered = await retryUpdateLostWithTask(() =>
        handle.executeUpdate(payoutDecisionUpdate, { args: [{ ...decision, decisionId }] }),
      );
    } catch (err) {
      // Decided meanwhile by another process, or closed: the validator refused it.
      if (err instanceof WorkflowUpdateFailedError)
        return refuse(
          String((err.cause as Error | undefined)?.message ?? PAYOUT_NOT_AWAITING_APPROVAL),
          await flowState(handle, withdrawalStateQuery),
        );
      if (isNotFound(err)) return refuse(PAYOUT_NOT_AWAITING_APPROVAL, before);
      throw err;
    }
    // The update answers once the decision is taken; the flow then moves on (refused, or sent
    // with its last approval), which the audit row and the page should say.
    const a = answered.approval;
    const decided = a && (a.refusedBy !== undefined || a.approvals.length >= a.required);
    const after = decided
      ? await stateOnceSettled(
          () => flowState(handle, withdrawalStateQuery),
          (s) => s.status !== 'awaiting_approval',
          answered,
        )
      : answered;
    await recordAction(client, { ...audit, outcome: 'done', before: seenOf(before), after: seenOf(after) });
    return { after };
  });
}
