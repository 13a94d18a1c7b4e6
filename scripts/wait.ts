// Waiting for something that happens asynchronously (a server answering, a row delivered, a
// workflow reaching a state) by reading it again until it holds, never by sleeping a guessed
// time. Scripts and tests share it (test/helpers/wait.ts re-exports it).

export interface WaitOptions<T> {
  /** Give up after this long (default 20 s). */
  timeoutMs?: number;
  /** Between reads (default 100 ms). */
  intervalMs?: number;
  /** The error thrown at the deadline, from the last value read. */
  onTimeout?: (last: T) => Error;
}

/**
 * Reads until `ok(value)` holds and returns that value. A read that throws stops the wait with
 * its error (so a read can end it early, e.g. when the process waited on has exited). The last
 * read is taken at or after the deadline. A number is the timeout.
 */
export async function waitUntil<T>(
  read: () => T | Promise<T>,
  ok: (v: T) => boolean,
  options: WaitOptions<T> | number = {},
): Promise<T> {
  const o = typeof options === 'number' ? { timeoutMs: options } : options;
  const deadline = Date.now() + (o.timeoutMs ?? 20_000);
  let last = await read();
  while (!ok(last)) {
    if (Date.now() > deadline) {
      throw o.onTimeout?.(last) ?? new Error(`condition never met; last: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, o.intervalMs ?? 100));
    last = await read();
  }
  return last;
}
