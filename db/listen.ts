import pg from 'pg';
import type { Pool } from './pool';

export interface Listener {
  /** Whether the connection listens now: while it does not, a caller polls. */
  listening(): boolean;
  close(): Promise<void>;
}

/**
 * Calls `onNotify` on each notification on `channel`, on a connection of its own (the pool's
 * settings), and once each time it listens (again), for what was committed while it did not. A
 * lost connection is made again after `retryMs`.
 */
export function listenOn(
  pool: Pool,
  channel: string,
  onNotify: () => void,
  onLost: (err: unknown) => void,
  retryMs = 1_000,
): Listener {
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    const c = new pg.Client(pool.options);
    let gone = false;
    const lost = (err?: unknown) => {
      if (gone) return;
      gone = true;
      if (client === c) client = undefined;
      c.end().catch(() => {});
      if (closed) return;
      if (err) onLost(err);
      retry = setTimeout(() => void connect(), retryMs);
    };
    c.on('notification', () => onNotify());
    c.on('error', lost);
    c.on('end', () => lost(new Error(`${channel} listener connection ended`)));
    try {
      await c.connect();
      await c.query(`LISTEN ${channel}`);
    } catch (err) {
      lost(err);
      return;
    }
    if (closed) {
      gone = true;
      await c.end().catch(() => {});
      return;
    }
    client = c;
    onNotify();
  };
  void connect();
  return {
    listening: () => client !== undefined,
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => {});
    },
  };
}
