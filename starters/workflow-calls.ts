import {
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowNotFoundError,
} from '@temporalio/client';
import type { QueryDefinition } from '@temporalio/common';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow';

// What request handlers ask of Temporal besides the flows' own signals and updates: a flow's
// state (its query while it runs, its run's result once it completed), which errors mean "no such
// workflow" or "already started", whether one exists, and an update sent again when the server
// lost it.

export function isNotFound(err: unknown): boolean {
  return err instanceof WorkflowNotFoundError;
}

export function isAlreadyStarted(err: unknown): boolean {
  return err instanceof WorkflowExecutionAlreadyStartedError;
}

/** Whether a workflow with this id exists at all (running or closed). */
export async function workflowExists(handle: WorkflowHandle): Promise<boolean> {
  try {
    await handle.describe();
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * A flow's state: its `state` query while its workflow runs; once its run has completed, the
 * final state the run returned (every flow returns it), which the server keeps in the run's
 * history and hands out without a worker. A query of a closed run would need a worker of the build
 * the run was on, and a pinned run's build is retired once it has drained: its finished flows stay
 * readable for as long as Temporal keeps them. `completed` adds what a flow leaves out of its
 * result. A run that closed without a result (failed, terminated, cancelled, timed out) is still
 * asked: only a worker can replay it to its last state.
 */
export async function flowState<S>(
  handle: WorkflowHandle,
  query: QueryDefinition<S, []>,
  completed?: (result: S, run: WorkflowHandle) => Promise<S>,
): Promise<S> {
  const { runId, status } = await handle.describe();
  if (status.name !== 'COMPLETED') return handle.query(query);
  // That run: the id may start another since (an onboarding again, the next biometric
  // identification), whose result would wait for its end.
  const run = handle.client.getHandle(handle.workflowId, runId, { followRuns: false });
  const result = (await run.result()) as S;
  return completed ? completed(result, run) : result;
}

/**
 * What a closed run's history keeps besides its result, decoded as the client decodes: the
 * argument it started with, and its answers to the update named `update`, in order.
 */
export async function runRecord(
  run: WorkflowHandle,
  update: string,
): Promise<{ input: unknown; updateAnswers: unknown[] }> {
  const converter = run.client.options.loadedDataConverter;
  const events = (await run.fetchHistory()).events ?? [];
  const started = events[0]?.workflowExecutionStartedEventAttributes;
  const asked = new Set(
    events
      .map((e) => e.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest)
      .filter((r) => r?.input?.name === update)
      .map((r) => r?.meta?.updateId),
  );
  const answered = events
    .map((e) => e.workflowExecutionUpdateCompletedEventAttributes)
    .filter((c) => asked.has(c?.meta?.updateId) && c?.outcome?.success)
    .map((c) => decodeFromPayloadsAtIndex(converter, 0, c?.outcome?.success?.payloads));
  return {
    input: await decodeFromPayloadsAtIndex(converter, 0, started?.input?.payloads),
    updateAnswers: await Promise.all(answered),
  };
}

const GRPC_FAILED_PRECONDITION = 9;
/** How many times an update lost with its workflow task is sent (the first time included). */
const UPDATE_ATTEMPTS = 3;

/**
 * The server dropped an update it had handed to a workflow task that it then failed; the usual
 * cause is a signal (a provider notification) that arrived while that task closed the flow, which
 * the server refuses and hands the worker again. The update was not applied and nothing the
 * caller did caused it: sending it again is safe, and finds the flow as the next task leaves it.
 */
function updateLostWithItsTask(err: unknown): boolean {
  // Update-with-start throws the gRPC error itself; an update alone wraps it in a ServiceError.
  const lost = (e: unknown) => {
    const grpc = e as { code?: unknown; message?: unknown } | undefined;
    return grpc?.code === GRPC_FAILED_PRECONDITION && /workflow task failure/i.test(String(grpc.message));
  };
  return lost(err) || lost((err as { cause?: unknown } | undefined)?.cause);
}

/** Sends an update (with or without start), and again while the server lost it with its task. */
export async function retryUpdateLostWithTask<T>(send: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (!updateLostWithItsTask(err) || attempt >= UPDATE_ATTEMPTS) throw err;
    }
  }
}
