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
import { isAlreadyStarted, retryUpdateLostWithTask } from './workflow-calls';

/** A flow to start, keyed by its business id, with the keyed hash of the request that starts it. */
export interface FlowStart<W extends Workflow, Refusal> {
  workflowType: string;
  options: Omit<WorkflowStartOptions<W>, 'workflowIdConflictPolicy' | 'workflowIdReusePolicy' | 'memo'>;
  /** The memo entry that keeps the request's keyed hash (never the request: it holds a CPF). */
  requestHash: { memoKey: string; value: string };
  /** Why a different request for the same business id is refused. */
  conflictReason: string;
  /**
   * The flow's own answer to an update it failed (the failure's cause): a refusal of its rules,
   * the provider's. Undefined leaves it a conflict (the update's validator refused the request).
   */
  refusal?: (cause: Error | undefined) => Refusal | undefined;
}

export type StartOutcome<Ret, W extends Workflow, Refusal> =
  | { kind: 'answered'; answer: Ret }
  /** The same request again, for a flow that is already closed: answer from its state. */
  | { kind: 'closed'; closed: WorkflowHandle<W> }
  /** The flow failed the update with an answer of its own (FlowStart.refusal). */
  | { kind: 'refused'; refusal: Refusal }
  /** Another request for the same business id. */
  | { kind: 'conflict'; reason: string };

/** Keyed hash of a request (it holds a CPF): comparable, kept in the memo, not reversible. */
export function requestHash(v: unknown, key: string): string {
  return createHmac('sha256', key).update(canonicalJson(v)).digest('hex');
}

/**
 * One round trip: update-with-start creates the flow, or attaches to the running one, and answers
 * the update (its validator refuses a different request: a conflict). A closed flow is never
 * started again for its business id: the memo's hash of the request that started it tells a
 * repeat from a conflict.
 */
export async function startOrAttach<W extends Workflow, Ret, Args extends unknown[], Refusal>(
  temporal: Client,
  update: UpdateDefinition<Ret, Args>,
  args: Args,
  flow: FlowStart<W, Refusal>,
): Promise<StartOutcome<Ret, W, Refusal>> {
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
    return { kind: 'answered', answer };
  } catch (err) {
    // A failed update (a validator's rejection, the flow's own refusal) is the caller's answer.
    if (err instanceof WorkflowUpdateFailedError) {
      const refusal = flow.refusal?.(err.cause);
      if (refusal !== undefined) return { kind: 'refused', refusal };
      return { kind: 'conflict', reason: err.cause?.message ?? err.message };
    }
    if (!isAlreadyStarted(err)) throw err;
    const closed = temporal.workflow.getHandle<W>(flow.options.workflowId);
    const { memo } = await closed.describe();
    if (memo?.[flow.requestHash.memoKey] !== flow.requestHash.value) {
      return { kind: 'conflict', reason: flow.conflictReason };
    }
    return { kind: 'closed', closed };
  }
}
