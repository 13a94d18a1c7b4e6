import {
  type Client,
  WithStartWorkflowOperation,
  type WorkflowHandle,
  type WorkflowStartOptions,
} from '@temporalio/client';
import type { UpdateDefinition, Workflow } from '@temporalio/common';
import { conflict, isAlreadyStarted, updateFailure } from './route-helpers';

/** A flow to start, keyed by its business id, with the keyed hash of the request that starts it. */
export interface FlowStart<W extends Workflow> {
  workflowType: string;
  options: Omit<WorkflowStartOptions<W>, 'workflowIdConflictPolicy' | 'workflowIdReusePolicy' | 'memo'>;
  /** The memo entry that keeps the request's keyed hash (never the request: it holds a CPF). */
  requestHash: { memoKey: string; value: string };
  /** Why a different request for the same business id is refused. */
  conflictReason: string;
}

export type StartOutcome<Ret, W extends Workflow> =
  | { answered: true; answer: Ret }
  /** The same request again, for a flow that is already closed: answer from its state. */
  | { answered: false; closed: WorkflowHandle<W> };

const GRPC_FAILED_PRECONDITION = 9;
/** How many times an update lost with its workflow task is asked for (the first ask included). */
const UPDATE_ATTEMPTS = 3;

/**
 * The server dropped an update it had handed to a workflow task that it then failed; the usual
 * cause is a signal (a provider notification) that arrived while that task closed the flow, which
 * the server refuses and hands the worker again. The update was not applied and nothing the
 * caller did caused it: asking again is safe, and finds the flow as the next task leaves it.
 */
function updateLostWithItsTask(err: unknown): boolean {
  // Update-with-start throws the gRPC error itself; an update alone wraps it in a ServiceError.
  const lost = (e: unknown) => {
    const grpc = e as { code?: unknown; message?: unknown } | undefined;
    return grpc?.code === GRPC_FAILED_PRECONDITION && /workflow task failure/i.test(String(grpc.message));
  };
  return lost(err) || lost((err as { cause?: unknown } | undefined)?.cause);
}

/** Sends an update (with or without start) again while the server lost it with its task. */
export async function askAgainIfLost<T>(ask: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await ask();
    } catch (err) {
      if (!updateLostWithItsTask(err) || attempt >= UPDATE_ATTEMPTS) throw err;
    }
  }
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
    const answer = await askAgainIfLost(() =>
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
    const problem = updateFailure(err);
    if (problem) throw problem;
    if (!isAlreadyStarted(err)) throw err;
    const closed = temporal.workflow.getHandle<W>(flow.options.workflowId);
    const { memo } = await closed.describe();
    if (memo?.[flow.requestHash.memoKey] !== flow.requestHash.value) throw conflict(flow.conflictReason);
    return { answered: false, closed };
  }
}
