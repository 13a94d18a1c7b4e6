import { randomBytes } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { isProviderError, RateLimitedError, UnclassifiedAnswerError } from '../connectors/errors';
import { raiseUnclassifiedAnswer } from '../db/alerts';
import type { ActivityDeps } from './deps';

// How a provider's failure becomes an activity's: a business refusal stops at once, a rate limit
// waits as long as the provider asked, anything else is retried on the flow's schedule. An answer
// no rule reads is retried too, and told: the metric, the flow's alert, a log line naming it.

function asActivityFailure(err: unknown): unknown {
  if (err instanceof RateLimitedError && err.retryAfterMs !== undefined) {
    return ApplicationFailure.create({
      message: err.message,
      type: err.code,
      nextRetryDelay: err.retryAfterMs,
    });
  }
  if (isProviderError(err) && !err.retryable) {
    return ApplicationFailure.nonRetryable(err.message, err.code);
  }
  return err;
}

/** Tells of an answer no rule reads: for the flow the calling activity runs for, or the one named. */
export type UnclassifiedNotice = (err: UnclassifiedAnswerError, workflowId?: string) => Promise<void>;

export function unclassifiedNotice({
  pool,
  countUnclassified,
}: Pick<ActivityDeps, 'pool' | 'countUnclassified'>): UnclassifiedNotice {
  return async (err, workflowId) => {
    const ctx = Context.current();
    const flow = workflowId ?? ctx.info.workflowExecution?.workflowId ?? '';
    countUnclassified?.(err.op);
    ctx.log.warn('provider answer pixflow cannot read: the flow keeps waiting', {
      workflowId: flow,
      op: err.op,
      field: err.field,
    });
    await raiseUnclassifiedAnswer(pool, {
      id: `alr_${randomBytes(16).toString('hex')}`,
      workflowId: flow,
      op: err.op,
      field: err.field,
    });
  };
}

export async function providerCall<T>(fn: () => Promise<T>, notice?: UnclassifiedNotice): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (notice && err instanceof UnclassifiedAnswerError) await notice(err);
    throw asActivityFailure(err);
  }
}
