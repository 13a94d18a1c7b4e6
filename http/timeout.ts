/**
 * `p`, or a rejection "<what> timed out after <ms> ms" if it has not settled by then. The timer
 * is cleared either way, so a settled call leaves nothing behind to keep the process alive.
 */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}
