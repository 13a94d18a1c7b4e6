import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ProviderUnavailableError, RateLimitedError } from '../helpers/identity-payments-wire';
import { waitUntil } from '../helpers/wait';
import {
  clientFor,
  control,
  payee,
  sandboxState,
  startProviderSandbox,
  startReceiver,
  waitFor,
} from './support';

type Sandbox = Awaited<ReturnType<typeof startProviderSandbox>>;
let sb: Sandbox;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
let seq = 0;

beforeAll(async () => {
  sb = await startProviderSandbox({ notificationBackoffMs: 20, notificationMaxAttempts: 3 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await sb.close();
  await receiver.close();
});
beforeEach(async () => {
  await control(sb.url, '/sandbox/reset');
  await control(sb.url, '/sandbox/notifications', { url: `${receiver.url}/hook`, partnerId: 'pf' });
  receiver.clear();
  receiver.failNext(0);
});

const withdraw = (c: ReturnType<typeof clientFor>, transactionId: string) =>
  c.createWithdrawal({
    client: payee,
    pixKey: '63401825771',
    pixType: 'CPF',
    amountCentavos: 100,
    transactionId,
  });
const deposit = (c: ReturnType<typeof clientFor>) =>
  c.createDeposit({ client: payee, amountCentavos: 100, txid: String(++seq) });

describe('fault knobs', () => {
  it('adds fixed latency and random spikes', async () => {
    const c = clientFor(sb.url);
    await c.getReceipt('x');
    await control(sb.url, '/sandbox/faults', { latency: { fixedMs: 120 } });
    let t = Date.now();
    await c.getReceipt('x');
    expect(Date.now() - t).toBeGreaterThanOrEqual(110);
    await control(sb.url, '/sandbox/faults', { latency: { fixedMs: 0, spikeMs: 150, spikeProbability: 1 } });
    t = Date.now();
    await c.getReceipt('x');
    expect(Date.now() - t).toBeGreaterThanOrEqual(140);
  });

  it('errorRate 1 makes an endpoint answer 5xx without acting; failNext for N calls', async () => {
    const c = clientFor(sb.url);
    await control(sb.url, '/sandbox/faults', { errorRate: { withdraw: 1 } });
    await expect(withdraw(c, 'er-1')).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect((await sandboxState(sb.url)).counters.payouts['er-1']).toBeUndefined();
    await control(sb.url, '/sandbox/faults', { errorRate: { withdraw: 0 }, failNext: { inquiry: 2 } });
    await expect(c.getWithdrawal('x')).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(c.getWithdrawal('x')).rejects.toBeInstanceOf(ProviderUnavailableError);
    await expect(c.getWithdrawal('x')).rejects.toMatchObject({ name: 'NotFoundError' });
  });

  it('withdraw acts then times out: the caller sees ProviderUnavailableError, the payout exists once', async () => {
    const c = clientFor(sb.url, { timeoutMs: 150 });
    await control(sb.url, '/sandbox/faults', {
      actThenFail: { withdraw: { mode: 'timeout', count: 1, delayMs: 1000 } },
    });
    const err = await withdraw(c, 'late-1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as ProviderUnavailableError).retryable).toBe(true);
    expect((await sandboxState(sb.url)).counters.payouts['late-1']).toBe(1);
    // the safe retry: look it up first
    expect((await c.getWithdrawal('late-1')).status).toBe('processing');
  });

  it('withdraw acts then hangs: listed as held while its caller waits, until the caller hangs up', async () => {
    const c = clientFor(sb.url, { timeoutMs: 3_000 });
    await control(sb.url, '/sandbox/faults', { actThenFail: { withdraw: { mode: 'hang', count: 1 } } });
    let answered = false;
    const call = withdraw(c, 'hang-1').finally(() => {
      answered = true;
    });
    const faults = async () => (await sandboxState(sb.url)).faults;
    // The sandbox's word that it has the payout and holds the answer.
    const { held } = await waitUntil(faults, (f) => f.held.length > 0);
    expect(held).toEqual([
      { endpoint: 'withdraw', id: 'hang-1', callerPort: expect.any(Number), since: expect.any(String) },
    ]);
    expect((await sandboxState(sb.url)).counters.payouts['hang-1']).toBe(1);
    expect(answered).toBe(false);
    // The caller gives up: no answer ever came, and the held answer goes with its connection.
    await expect(call).rejects.toBeInstanceOf(ProviderUnavailableError);
    await waitUntil(faults, (f) => f.held.length === 0);
    await expect(withdraw(clientFor(sb.url), 'hang-1')).rejects.toMatchObject({
      name: 'DuplicateTransactionError',
    });
    const after = await sandboxState(sb.url);
    expect(after.counters.payouts['hang-1']).toBe(1);
    expect(after.counters.duplicateWithdrawalsRejected).toBe(1);
    // Only the next call was held: the knob is spent.
    expect((await withdraw(clientFor(sb.url), 'hang-2')).transactionId).toBe('hang-2');
  });

  it('withdraw acts then answers 500', async () => {
    const c = clientFor(sb.url);
    await control(sb.url, '/sandbox/faults', { actThenFail: { withdraw: { mode: 'error', count: 1 } } });
    await expect(withdraw(c, 'err-1')).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect((await sandboxState(sb.url)).counters.payouts['err-1']).toBe(1);
    await expect(withdraw(c, 'err-1')).rejects.toMatchObject({ name: 'DuplicateTransactionError' });
    expect((await sandboxState(sb.url)).counters.payouts['err-1']).toBe(1);
  });

  it('a token 429 is waited out: no token is asked for again before its Retry-After', async () => {
    const c = clientFor(sb.url);
    await control(sb.url, '/sandbox/faults', { tokenRateLimitNext: 1, retryAfterSeconds: 1 });
    const first = await c.kyc('63401825771', 'plan_basic').catch((e: unknown) => e);
    expect(first).toBeInstanceOf(RateLimitedError);
    expect((first as RateLimitedError).retryAfterMs).toBe(1000);
    const asked = c.tokenRequests;
    const held = await c.kyc('63401825771', 'plan_basic').catch((e: unknown) => e);
    expect(held).toBeInstanceOf(RateLimitedError);
    expect(c.tokenRequests).toBe(asked);
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await c.kyc('63401825771', 'plan_basic')).status).toBe('regular');
    expect(c.tokenRequests).toBe(asked + 1);
  });

  it('drops the next N notifications', async () => {
    const c = clientFor(sb.url);
    await control(sb.url, '/sandbox/faults', { notifications: { dropNext: 2 } });
    await deposit(c);
    await deposit(c);
    await deposit(c);
    await waitFor(() => receiver.received.length === 1);
    await new Promise((r) => setTimeout(r, 50));
    expect(receiver.received).toHaveLength(1);
    expect((await sandboxState(sb.url)).counters.notificationsDropped).toBe(2);
  });

  it('a payment can lose its own notification, which is then known by deposit', async () => {
    const c = clientFor(sb.url);
    const lost = await deposit(c);
    const kept = await deposit(c);
    await waitFor(() => receiver.received.length === 2);
    const paid = await control(sb.url, `/sandbox/deposits/${lost.txid}/pay`, { dropNotification: true });
    expect(paid.body).toMatchObject({ txid: lost.txid, status: 'completed' });
    await control(sb.url, `/sandbox/deposits/${kept.txid}/pay`, { dropNotification: false });
    await waitFor(() => receiver.received.length === 3);
    await new Promise((r) => setTimeout(r, 50));
    expect(receiver.received.filter((r) => r.body.action === 'updated').map((r) => r.body.id)).toEqual([
      kept.txid,
    ]);
    expect((await c.getDeposit(lost.txid)).status).toBe('completed');
    expect((await sandboxState(sb.url)).counters.notificationsDropped).toBe(1);
    expect((await control(sb.url, '/sandbox/faults', undefined, 'GET')).body).toMatchObject({
      notifications: { dropNext: 0 },
    });
  });

  it('duplicates every notification N times', async () => {
    const c = clientFor(sb.url);
    await control(sb.url, '/sandbox/faults', { notifications: { duplicate: 2 } });
    const d = await deposit(c);
    await waitFor(() => receiver.received.length === 3);
    expect(receiver.received.every((r) => r.body.id === d.txid && r.body.action === 'requested')).toBe(true);
  });

  it('delays notifications by N ms', async () => {
    const c = clientFor(sb.url);
    await control(sb.url, '/sandbox/faults', { notifications: { delayMs: 200 } });
    const t = Date.now();
    await deposit(c);
    await waitFor(() => receiver.received.length === 1);
    expect(receiver.received[0]!.at - t).toBeGreaterThanOrEqual(190);
  });

  it('reorders notifications', async () => {
    const c = clientFor(sb.url);
    await control(sb.url, '/sandbox/faults', { notifications: { reorderWindow: 2 } });
    const d = await deposit(c);
    await control(sb.url, `/sandbox/deposits/${d.txid}/pay`, {});
    await waitFor(() => receiver.received.length === 2);
    expect(receiver.received.map((r) => r.body.action)).toEqual(['updated', 'requested']);
  });

  it('retries with back-off while the receiver fails, and gives up after the bounded attempts', async () => {
    const c = clientFor(sb.url);
    receiver.failNext(2);
    await deposit(c);
    await waitFor(() => receiver.received.length === 1);
    let state = await sandboxState(sb.url);
    expect(state.counters.notificationFailedAttempts).toBe(2);
    expect(state.counters.notificationsSent).toBe(1);
    receiver.failNext(3);
    await deposit(c);
    await waitFor(() => receiver.attempts >= 6);
    // The give-up is counted once the last attempt's answer is in.
    state = await waitUntil(
      () => sandboxState(sb.url),
      (s) => s.counters.notificationsGaveUp > 0,
      { timeoutMs: 5000, intervalMs: 20 },
    );
    expect(state.counters.notificationsGaveUp).toBe(1);
    expect(receiver.received).toHaveLength(1);
  });

  it('validates control bodies', async () => {
    expect((await control(sb.url, '/sandbox/faults', { errorRate: { nope: 1 } })).status).toBe(400);
    expect((await control(sb.url, '/sandbox/faults', { latency: { fixedMs: -1 } })).status).toBe(400);
    expect(
      (await control(sb.url, '/sandbox/notifications', { url: 'not a url', partnerId: 'x' })).status,
    ).toBe(400);
    expect((await control(sb.url, '/sandbox/liveness/complete', {})).status).toBe(400);
    expect((await control(sb.url, '/sandbox/deposits/1/pay', { dropNotification: 'yes' })).status).toBe(400);
    expect((await control(sb.url, '/sandbox/healthz', undefined, 'GET')).status).toBe(404);
    expect((await control(sb.url, '/healthz', undefined, 'GET')).body).toEqual({ status: 'ok' });
  });
});
