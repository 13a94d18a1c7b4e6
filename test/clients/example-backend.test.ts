import net from 'node:net';
import os from 'node:os';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { PixflowEvent } from '../../clients/typescript/src';
import { loadConfig } from '../../common/config';
import { API_KEY, type ApiEnv, eventually, startApiEnv } from '../api/support';
import { type NpmScript, runNpmScript } from '../helpers/npm-script';

// The TypeScript client's example backend (clients/typescript/example), a game, run as its
// README says, `npm run example:backend`, against the real API, worker, Temporal, Postgres,
// sandbox and events relay: it registers its webhook endpoint at its own local address, onboards
// a player, takes a deposit and pays a prize, all through the client, and believes only the
// events verifyEvent() verified. The sandbox stands in for the player's phone and bank.

const PLAYER = { cpf: '73628883504', name: 'Bia Lima', email: 'bia@example.com' };
const { WEBHOOK_SECRET, WEBHOOK_PARTNER_ID } = loadConfig({});

let e: ApiEnv;
let example: NpmScript;
let game: string;
let port: number;

/** The example backend's own API, as its front end would call it. */
async function ask<T>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await fetch(`${game}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

interface Inbox {
  events: PixflowEvent[];
  refused: number;
}
const inbox = async () => (await ask<Inbox>('GET', '/events')).body;
/** Waits until the example backend holds a verified event of this type, and of this flow's when given. */
const eventOf = (type: string, match: (e: PixflowEvent) => boolean = () => true) =>
  eventually(
    async () => (await inbox()).events.find((x) => x.type === type && match(x)),
    (x) => x !== undefined,
    { timeoutMs: 60_000 },
  );

beforeAll(async () => {
  e = await startApiEnv(
    { pollScheduleMs: [1_000] },
    {
      env: { WEBHOOK_ALLOW_LOOPBACK: 'true' },
      eventsRelay: { retryScheduleMs: [200, 300, 300], timeoutMs: 2_000 },
    },
  );
  // The provider's notifications (liveness, deposits, payouts) reach pixflow's ingress.
  await e.sandboxControl('/sandbox/notifications', {
    url: `${e.url}/webhooks/provider/${WEBHOOK_SECRET}`,
    partnerId: WEBHOOK_PARTNER_ID,
  });
  // Its defaults are `npm start`'s; here pixflow is this test's API, and any free port will do.
  const env: NodeJS.ProcessEnv = { ...process.env, PIXFLOW_URL: e.url, PIXFLOW_API_KEY: API_KEY, PORT: '0' };
  delete env.PUBLIC_URL;
  example = runNpmScript('example:backend', env);
  const [, local, hook] = await example.printed(
    /example backend listening on (\S+); pixflow \(\S+\) pushes every event to (\S+) /,
    60_000,
  );
  game = local as string;
  port = Number(new URL(game).port);
  // Without PUBLIC_URL, pixflow reaches it where it listens.
  expect(hook).toBe(`${game}/webhooks/pixflow`);
}, 120_000);
afterAll(async () => {
  await example?.stop();
  await e?.close();
});

/** Whether a TCP connection to this address and port is accepted. */
const accepts = (host: string) =>
  new Promise<boolean>((resolve) => {
    const socket = net.connect({ host, port, timeout: 2_000 });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
  });

it('listens on 127.0.0.1 only, not on the machine’s other addresses', async () => {
  expect(game).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  expect(await accepts('127.0.0.1')).toBe(true);
  // Every other address of this machine, the IPv6 loopback among them (link-local ones need a scope).
  const others = Object.values(os.networkInterfaces())
    .flat()
    .filter((a) => a !== undefined && a.address !== '127.0.0.1' && !a.address.startsWith('fe80:'))
    .map((a) => a!.address);
  expect(others.length, 'an address besides 127.0.0.1 to try').toBeGreaterThan(0);
  for (const address of others) expect(await accepts(address), address).toBe(false);
});

it('onboards a player, takes a deposit and pays a prize, told of each by verified events', async () => {
  // Sign-up: the player opens the liveness link and passes (the sandbox's test document).
  const signUp = await ask<{ status: string; livenessUrl: string }>('POST', '/players', PLAYER);
  expect(signUp.status).toBe(201);
  expect(signUp.body.livenessUrl).toMatch(/^https?:\/\//);
  await e.sandboxControl('/sandbox/liveness/complete', { document: PLAYER.cpf });
  await eventOf('onboarding.approved');
  expect((await ask<{ status: string }>('GET', `/players/${PLAYER.cpf}`)).body.status).toBe('approved');
  // Money moves once the person's verification says approved: the event tells when.
  await eventOf(
    'customer.verification_updated',
    (x) =>
      x.data.flowType === 'customer' &&
      'verification' in x.data.state &&
      x.data.state.verification === 'approved',
  );

  // A deposit from an account pixflow refuses: its refusal comes back naming the field.
  const badAccount = await ask<{ fields: { name: string }[] }>('POST', `/players/${PLAYER.cpf}/deposits`, {
    amountCentavos: 15_000,
    bankAccount: { ispb: '6070119', branch: '1234', number: '987654321' },
  });
  expect(badAccount.status).toBe(400);
  expect(badAccount.body.fields.map((f) => f.name)).toEqual(['body.client.bankAccount.ispb']);
  // A deposit: the client gave it a txid; the player's bank pays the Pix code.
  const deposit = await ask<{ txid: string; pixCode: string }>('POST', `/players/${PLAYER.cpf}/deposits`, {
    amountCentavos: 15_000,
    bankAccount: { ispb: '60701190', branch: '1234', number: '987654321' },
  });
  expect(deposit.status).toBe(201);
  expect(deposit.body.txid).toMatch(/^\d{32}$/);
  expect(deposit.body.pixCode).toMatch(/^000201/);
  await e.sandboxControl(`/sandbox/deposits/${deposit.body.txid}/pay`, {});
  const paid = await eventOf('deposit.completed', (x) => x.data.businessId === deposit.body.txid);

  // A prize, paid to the player's own key; the receiving bank settles it.
  const prize = await ask<{ transactionId: string; status: string }>(
    'POST',
    `/players/${PLAYER.cpf}/prizes`,
    {
      amountCentavos: 5_000,
    },
  );
  expect(prize.status).toBe(201);
  expect(prize.body.transactionId).toMatch(/^[0-9a-f-]{36}$/);
  await eventually(
    async () => {
      const res = await e.call('GET', `/v1/withdrawals/${prize.body.transactionId}`);
      return ((await res.json()) as { state: { status: string } }).state.status;
    },
    (s) => s === 'processing',
    { timeoutMs: 60_000 },
  );
  await e.sandboxControl(`/sandbox/withdrawals/${prize.body.transactionId}/settle`);
  const settled = await eventOf(
    'withdrawal.completed',
    (x) => x.data.businessId === prize.body.transactionId,
  );

  expect(paid?.data.state).toMatchObject({ status: 'completed', amountCentavos: 15_000 });
  expect(settled?.data.state).toMatchObject({ status: 'completed', amountCentavos: 5_000 });
  const { events, refused } = await inbox();
  // It subscribed to every event: these among them.
  expect([...new Set(events.map((x) => x.type))]).toEqual(
    expect.arrayContaining([
      'onboarding.approved',
      'customer.verification_updated',
      'deposit.completed',
      'withdrawal.completed',
    ]),
  );
  expect(events.every((x) => x.id.startsWith('evt_'))).toBe(true);
  // Every delivery pixflow made verified.
  expect(refused).toBe(0);
});

it('refuses an event signed with a secret that is not its endpoint’s, and keeps nothing of it', async () => {
  const before = await inbox();
  const body = JSON.stringify({ type: 'deposit.completed', timestamp: new Date().toISOString(), data: {} });
  const forger = new Webhook(`whsec_${Buffer.from('not-the-endpoint-secret!').toString('base64')}`);
  const at = new Date();
  const res = await fetch(`${game}/webhooks/pixflow`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'webhook-id': 'evt_forged',
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': forger.sign('evt_forged', at, body),
    },
    body,
  });
  expect(res.status).toBe(400);
  const after = await inbox();
  expect(after.events).toEqual(before.events);
  expect(after.refused).toBe(before.refused + 1);
});
