import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type StartSandboxOptions, startSandbox } from '../../sandbox/app';
import type { HeldAnswer } from '../../sandbox/faults';
import { waitUntil } from '../helpers/wait';

// Shared helpers for the contract tests: the sandbox in-process on port 0, a real client against it,
// control calls, and a local webhook receiver.

export async function startProviderSandbox(options: StartSandboxOptions = {}) {
  return startSandbox({ port: 0, host: '127.0.0.1', ...options });
}

export { clientFor } from '../helpers/sandbox-client';

export async function control(url: string, path: string, body?: unknown, method = 'POST') {
  const res = await fetch(`${url}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json()) as Record<string, unknown>;
  return { status: res.status, body: json };
}

export interface SandboxStateView {
  counters: {
    tokenRequests: number;
    tokensIssued: number;
    payouts: Record<string, number>;
    notificationsSent: number;
    notificationsDropped: number;
    notificationsGaveUp: number;
    notificationFailedAttempts: number;
    requests: Record<string, number>;
    duplicateWithdrawalsRejected: number;
  };
  withdrawals: { txid: string; status: string }[];
  deposits: { txid: string; status: string }[];
  liveness: { id: string; document: string; statusVerification: string; actionType: string }[];
  faults: { held: HeldAnswer[] };
}

export async function sandboxState(url: string): Promise<SandboxStateView> {
  const res = await fetch(`${url}/sandbox/state`);
  return (await res.json()) as SandboxStateView;
}

/** Raw provider request with a fresh token, to check bodies the client would refuse to send. */
export async function rawToken(url: string): Promise<string> {
  const res = await fetch(`${url}/oauth2/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: 'client_id=sandbox-client&client_secret=sandbox-secret&grant_type=client_credentials',
  });
  return ((await res.json()) as { access_token: string }).access_token;
}

export interface Received {
  path: string;
  body: Record<string, unknown>;
  at: number;
}

/** A local webhook receiver. `failNext(n)` makes the next n deliveries answer 500. */
export async function startReceiver() {
  const received: Received[] = [];
  let failing = 0;
  let attempts = 0;
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      attempts += 1;
      if (failing > 0) {
        failing -= 1;
        res.statusCode = 500;
        res.end('nope');
        return;
      }
      received.push({
        path: req.url ?? '',
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
        at: Date.now(),
      });
      res.statusCode = 204;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    get attempts() {
      return attempts;
    },
    failNext(n: number) {
      failing = n;
    },
    clear() {
      received.length = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export async function waitFor(check: () => boolean, timeoutMs = 5000, stepMs = 10): Promise<void> {
  await waitUntil(check, (met) => met, {
    timeoutMs,
    intervalMs: stepMs,
    onTimeout: () => new Error('waitFor: condition not met in time'),
  });
}

export const payee = {
  externalId: 'user-1',
  cpf: '63401825771',
  email: 'ana@example.com',
  name: 'Ana Costa',
};
