// Garbage collection settings for the processes `npm start` runs. A busy stack shares its cores
// between Temporal, the worker, the API, the provider sandbox and Postgres: each collection one of
// them makes is CPU the others wait for, and the deposit's answer is slowest when the machine is
// busiest.

/**
 * Node (worker, API, sandbox): semi-spaces of 32 MB, not 16. Requests and workflow tasks make
 * short-lived objects (protobufs, JSON, payloads); a young generation twice as large is collected
 * half as often, each time at about the same cost, since a scavenge costs what survives it. Tens
 * of MB more resident memory per process.
 */
export const NODE_RUNTIME_FLAGS = ['--max-semi-space-size=32'] as const;

/**
 * Go (the Temporal server): collect once the heap has grown to five times what is live, not
 * twice, held under a soft 1 GiB. Temporal allocates a lot for each task it handles and spent a
 * large share of its CPU collecting. Its resident memory roughly doubles, up to that bound. A
 * GOGC or GOMEMLIMIT the caller sets wins.
 */
export function temporalRuntimeEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { ...env, GOGC: env.GOGC ?? '400', GOMEMLIMIT: env.GOMEMLIMIT ?? '1GiB' };
}
