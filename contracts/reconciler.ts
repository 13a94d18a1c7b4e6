// The reconciler's contract: one long-running sweep per namespace and task queue, started by
// every worker at boot (the first one wins; the others find it running).

/** One reconciler per task queue: workers of another deployment on the same namespace keep theirs. */
export const reconcilerWorkflowId = (taskQueue: string) => `reconciler-${taskQueue}`;

/** Sweeps in one run before it continues as new, keeping its history short. */
export const SWEEPS_PER_RUN = 500;
