import net from 'node:net';

/** Every port this process has handed out: the OS may give a port it just gave back out again. */
const handedOut = new Set<number>();

/**
 * A free TCP port on 127.0.0.1, found by letting the OS pick one, never one this process handed
 * out before: the parts of one stack are given their ports before any of them listens.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await osPickedPort();
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

function osPickedPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** Whether something accepts TCP connections on 127.0.0.1:port. */
export function tcpOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** Whether this process can listen on 127.0.0.1:port right now. */
function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });
}

/**
 * A free port below the OS's ephemeral range (which starts at 32768 on Linux), for a server
 * that keeps its port in a signed 16-bit column: Temporal records its membership ports so.
 * Picked at random, so two callers rarely try the same one.
 */
export async function freeLowPort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (!taken.has(port) && (await canListen(port))) return port;
  }
  throw new Error('no free port found between 20000 and 32000');
}
