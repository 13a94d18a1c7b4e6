import type { Server } from 'node:http';

/** Resolves once the server listens; rejects with the listen error (EADDRINUSE, EACCES...). */
export function listen(server: Server, port: number, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      const addr = server.address();
      resolve(typeof addr === 'object' && addr ? addr.port : port);
    });
  });
}

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

// Read as the process starts, so a parent that dies while it is still starting counts too.
const parentAtLoad = process.ppid;

/**
 * Runs `stop` once on SIGINT, SIGTERM or SIGHUP, or once the parent process is gone (a starter
 * killed without a chance to stop its parts leaves them to init), then exits 0.
 */
export function onShutdown(stop: (reason: string) => Promise<void>): void {
  let stopping = false;
  const handler = (reason: string) => {
    if (stopping) return;
    stopping = true;
    stop(reason)
      .catch((err) => process.stderr.write(`shutdown error: ${String(err)}\n`))
      .finally(() => process.exit(0));
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => handler(signal));
  // Linux has no parent-death signal reachable from Node; an orphan's parent pid changes.
  setInterval(() => {
    if (process.ppid !== parentAtLoad) handler('parent process gone');
  }, 500).unref();
}
