import {
  WorkflowExecutionAlreadyStartedError,
  type WorkflowHandle,
  WorkflowNotFoundError,
} from '@temporalio/client';

// What request handlers ask of Temporal besides the flows' own signals, queries and updates:
// which errors mean "no such workflow" or "already started", whether one exists, and an update
// sent again when the server lost it.

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
