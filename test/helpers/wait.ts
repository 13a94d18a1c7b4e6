/** Polls `read` until `ok` holds (state reached asynchronously), without blind sleeps. */
export async function waitUntil<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 20_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (!ok(last)) {
    if (Date.now() > deadline) throw new Error(`condition never met; last: ${JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
    last = await read();
  }
  return last;
}
