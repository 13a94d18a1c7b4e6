import type { Logger } from './logger';

// The loop the background readers of Postgres share (the inbox relay, the alert monitor): one
// pass, then the next one after the interval, or at once when the pass read a full batch (more
// may be due). A failed pass is retried on the next tick and said now and then, not every tick.

export interface PollingLoop {
  stop(): Promise<void>;
}

export function startPollingLoop(o: {
  /** One pass; answers how many items it read. */
  pass: () => Promise<number>;
  batchSize: number;
  intervalMs: number;
  log: Pick<Logger, 'warn'>;
  /** Logged, with the error, when a pass fails (at most once a minute). */
  failure: string;
}): PollingLoop {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let current: Promise<void> = Promise.resolve();
  let lastFailureLog = 0;

  const loop = async () => {
    if (stopped) return;
    let read = 0;
    try {
      read = await o.pass();
    } catch (err) {
      if (Date.now() - lastFailureLog > 60_000) {
        lastFailureLog = Date.now();
        o.log.warn({ err: String(err) }, o.failure);
      }
    }
    if (stopped) return;
    timer = setTimeout(
      () => {
        current = loop();
      },
      read >= o.batchSize ? 0 : o.intervalMs,
    );
  };
  current = loop();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await current;
    },
  };
}
