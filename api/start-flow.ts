import { createHmac } from 'node:crypto';
import {
  type Client,
  WithStartWorkflowOperation,
  type WorkflowHandle,
  type WorkflowStartOptions,
  WorkflowUpdateFailedError,
} from '@temporalio/client';
import type { UpdateDefinition, Workflow } from '@temporalio/common';
import { canonicalJson } from '../common/canonical-json';
import type { Problem } from '../http/problem';
import { isAlreadyStarted, retryUpdateLostWithTask } from '../http/workflow-calls';
import { conflict } from './flow-answers';

/** A flow to start, keyed by its business id, with the keyed hash of the request that starts it. */
export interface FlowStart<W extends Workflow> {
  workflowType: string;
  options: Omit<WorkflowStartOptions<W>, 'workflowIdConflictPolicy' | 'workflowIdReusePolicy' | 'memo'>;
  /** The memo entry that keeps the request's keyed hash (never the request: it holds a CPF). */
  requestHash: { memoKey: string; value: string };
  /** Why a different request for the same business id is refused. */
  conflictReason: string;
  /**
   * The flow's own answer to an update it refused (the failure's cause); undefined leaves it
   * the caller's conflict (409).
   */
  refusal?: (cause: Error | undefined) => Problem | undefined;
}

export type StartOutcome<Ret, W extends Workflow> =
  | { answered: true; answer: Ret }
  /** The same request again, for a flow that is already closed: answer from its state. */
  | { answered: false; closed: WorkflowHandle<W> };

/** Keyed hash of a request (it holds a CPF): comparable, kept in the memo, not reversible. */
export function requestHash(v: unknown, key: string): string {
  return createHmac('sha256', key).update(canonicalJson(v)).digest('hex');
}

/** A refused update (a validator's rejection, a finished flow) is the caller's problem, not ours. */
function refusedUpdate<W extends Workflow>(err: unknown, flow: FlowStart<W>): Problem | undefined {
  if (!(err instanceof WorkflowUpdateFailedError)) return undefined;
  return flow.refusal?.(err.cause) ?? conflict(err.cause?.message ?? err.message);
}

/**
 * One round trip: update-with-start creates the flow, or attaches to the running one, and answers
 * the update (its validator refuses a different request: 409). A closed flow is never started
 * again for its business id: the memo's hash of the request that started it tells a repeat from
 * a conflict (409).
 */
export async function startOrAttach<W extends Workflow, Ret, Args extends unknown[]>(
  temporal: Client,
  update: UpdateDefinition<Ret, Args>,
  args: Args,
  flow: FlowStart<W>,
): Promise<StartOutcome<Ret, W>> {
  try {
    const answer = await retryUpdateLostWithTask(() =>
      temporal.workflow.executeUpdateWithStart(update, {
        args,
        startWorkflowOperation: new WithStartWorkflowOperation<W>(flow.workflowType, {
          ...flow.options,
          workflowIdConflictPolicy: 'USE_EXISTING',
          workflowIdReusePolicy: 'REJECT_DUPLICATE',
          // Read back only when the flow is closed and asked for again.
          memo: { [flow.requestHash.memoKey]: flow.requestHash.value },
        } as WorkflowStartOptions<W> & { workflowIdConflictPolicy: 'USE_EXISTING' }),
      }),
    );
    return { answered: true, answer };
  } catch (err) {
    const problem = refusedUpdate(err, flow);
    if (problem) throw problem;
    if (!isAlreadyStarted(err)) throw err;
    const closed = temporal.workflow.getHandle<W>(flow.options.workflowId);
    const { memo } = await closed.describe();
    if (memo?.[flow.requestHash.memoKey] !== flow.requestHash.value) throw conflict(flow.conflictReason);
    return { answered: false, closed };
  }
}
