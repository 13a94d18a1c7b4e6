import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { HandlerError, OperationError } from 'nexus-rpc';
import { inTheClear } from '../common/payload-converter';
import { isDatabaseUnavailable, isTemporalUnavailable, Problem } from '../http/problem';
import type { Refused } from '../starters/types';

// How the Nexus operations say no, from the starters' outcomes (starters/types.ts). Bad input is
// a handler error the caller's server does not retry (BAD_REQUEST, naming the field, as the API's
// request parsing words it); a refusal (a rule, a conflict, the provider's refusal, no such flow)
// fails the operation, once and for good; Temporal not answering in time is retried by the
// caller's server, as anything unexpected is. Each refusal's cause carries the `type` the API's
// problem has and its fields as details, so a caller's workflow can branch on them as an API
// client does. The details cross in the clear (common/payload-converter.ts): a caller reads them
// with no pixflow key, so they hold nothing personal (codes, statuses, amounts).

const message = (p: Problem) => (p.detail ? `${p.title}: ${p.detail}` : p.title);

const causeOf = (p: Problem) =>
  ApplicationFailure.create({
    type: p.slug,
    message: message(p),
    nonRetryable: true,
    details: [inTheClear({ ...p.extra })],
  });

/** A refusal as a failed operation: `type` names it, `details` say more (a state, a reason). */
export function refused(type: string, why: string, details: object): OperationError {
  return new OperationError('failed', why, {
    cause: ApplicationFailure.create({
      type,
      message: why,
      nonRetryable: true,
      details: [inTheClear(details)],
    }),
  });
}

/**
 * A flow's refusal of its rules as the failed operation: the API's problem `type`, and as details
 * the reason code, the rules' version, the flow that keeps it, and what the caller acts on.
 */
export function refusalError(
  r: Refused<unknown>,
  said: { type: string; title: string; detail: string; fields: Record<string, unknown> },
): OperationError {
  return refused(said.type, `${said.title}: ${said.detail}`, {
    reason: r.reason,
    ...(r.policyVersion === undefined ? {} : { policyVersion: r.policyVersion }),
    ...(r.brandPolicyVersion === undefined ? {} : { brandPolicyVersion: r.brandPolicyVersion }),
    workflowId: r.workflowId,
    ...said.fields,
  });
}

/** Another request for the same id: the API's 409 `conflict`. */
export const conflictError = (reason: string) =>
  refused('conflict', `Conflicts with the existing flow: ${reason}`, {});

/** No such flow: the API's 404 `flow-not-found`. */
export const flowNotFoundError = (what: string) =>
  refused('flow-not-found', `Flow not found: no ${what}`, {});

/** The Nexus error for what a handler threw around its starter; anything else as it is (a retried INTERNAL). */
export function nexusError(err: unknown): unknown {
  if (err instanceof HandlerError || err instanceof OperationError) return err;
  // The input's problems, as the API's request parsing words them (http/request-input.ts).
  if (err instanceof Problem && err.status === 400) {
    return new HandlerError('BAD_REQUEST', message(err), { cause: causeOf(err) });
  }
  // A refusal the API answers 409 with its own type (a brand that may not move money yet).
  if (err instanceof Problem && err.status === 409) return refused(err.slug, message(err), { ...err.extra });
  if (isTemporalUnavailable(err)) {
    return new HandlerError(
      'UNAVAILABLE',
      'Temporal, or the worker that runs this flow, did not answer in time: the operation is asked again',
      { cause: err },
    );
  }
  // Its words stay here: the caller needs only to know it is asked again.
  if (isDatabaseUnavailable(err))
    return new HandlerError(
      'UNAVAILABLE',
      "pixflow's database is not answering: the operation is asked again",
    );
  // A flow's run that ended without an outcome (failed for an operator, terminated) never gives one.
  if (err instanceof WorkflowFailedError) {
    return refused('flow-ended-without-outcome', `the flow's run ended without an outcome: ${err.message}`, {
      retryState: err.retryState,
    });
  }
  return err;
}

/** Runs a handler's work; what it throws comes out as the Nexus error for it. */
export async function answering<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw nexusError(err);
  }
}
