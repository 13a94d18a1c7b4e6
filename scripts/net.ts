import { readFileSync } from 'node:fs';
import net from 'node:net';

/** Every port this process has handed out: the parts of one stack get theirs before any listens. */
const handedOut = new Set<number>();

/**
 * The lowest port Linux gives outgoing connections as their own end (32768 unless configured).
 * A server port is picked below it: one picked among them may be taken by any process's next
 * connection between the pick and the bind, which on a busy machine happens.
 */
function ephemeralRangeStart(): number {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > 11_000 ? low : 32_768;
  } catch {
    return 32_768;
  }
}

/**
 * A free TCP port on 127.0.0.1 below the OS's ephemeral range and below 32768 (Temporal records
 * its membership ports in a signed 16-bit column), never one this process handed out before nor
 * one in `taken`. Picked at random, so two processes rarely try the same one.
 */
export async function freePort(taken: ReadonlySet<number> = new Set()): Promise<number> {
  const lo = 10_000;
  const hi = Math.min(ephemeralRangeStart(), 32_768);
  for (let i = 0; i < 500; i++) {
    const port = lo + Math.floor(Math.random() * (hi - lo));
    if (handedOut.has(port) || taken.has(port) || !(await canListen(port))) continue;
    handedOut.add(port);
    return port;
  }
  throw new Error(`no free port found between ${lo} and ${hi}`);
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
