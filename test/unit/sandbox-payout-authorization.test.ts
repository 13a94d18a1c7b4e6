import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  askPayoutAuthorization as askWith,
  type PayoutAuthorizationSettings,
} from '../../activities/payout-authorization';
import { PAYOUT_AUTHORIZATION_DEV_SECRET } from '../../common/config';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { payoutAuthorizationTestAmounts } from '../../sandbox/payout-authorization';
import { signedJsonRequest } from '../../signed-requests/client';
import { payoutAuthorizationRequest } from '../helpers/payout-authorization';
import { waitUntil } from '../helpers/wait';

// The sandbox's emulation of the operator's payout authorization, asked by pixflow's own client
// over HTTP: its test amounts, its control endpoint, and what it refuses.

const OTHER_SECRET = `whsec_${Buffer.from('not-the-payout-authorization-secret').toString('base64')}`;

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox.close();
});

const url = () => `${sandbox.url}/operator/payout-authorization`;
const settings = (over: Partial<PayoutAuthorizationSettings> = {}): PayoutAuthorizationSettings => ({
  url: url(),
  secret: PAYOUT_AUTHORIZATION_DEV_SECRET,
  timeoutMs: 1_000,
  backoffMs: 10,
  ...over,
});
const request = payoutAuthorizationRequest;
/** Asked as the default policy has it: no valid answer refuses the payout. */
const askPayoutAuthorization = (s: PayoutAuthorizationSettings, r: Parameters<typeof askWith>[1]) =>
  askWith(s, r, 'deny');
const control = (path: string, body: unknown) =>
  fetch(`${sandbox.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
interface Counters {
  asked: Record<string, number>;
  refused: number;
  held: number;
  decisions: Record<string, unknown>;
}
const counters = async () =>
  (await (await fetch(`${sandbox.url}/sandbox/payout-authorization`)).json()) as Counters;
const post = (body: string, headers: Record<string, string>) =>
  fetch(url(), { method: 'POST', headers, body });

describe("the sandbox's payout authorization", () => {
  it('approves an ordinary amount, denies one ending in ,13 with its reason', async () => {
    expect(await askPayoutAuthorization(settings(), request())).toEqual({ outcome: 'approved' });
    const deny = payoutAuthorizationTestAmounts.find((t) => t.centavos === 13)?.decision;
    expect(deny).toMatchObject({ decision: 'deny' });
    const denied = await askPayoutAuthorization(settings(), request({ amountCentavos: 12_313 }));
    expect(denied).toEqual({
      outcome: 'denied',
      reason: deny?.decision === 'deny' ? deny.reason : 'missing',
    });
  });

  it('never answers an amount ending in ,29: each attempt held until pixflow gives up, then closed', async () => {
    const question = request({ amountCentavos: 12_329 });
    const answer = await askPayoutAuthorization(settings({ timeoutMs: 200 }), question);
    expect(answer).toMatchObject({
      outcome: 'unanswered',
      send: false,
      problem: expect.stringMatching(/no answer within 200 ms \(attempt 3 of 3\)/),
    });
    // Each attempt reached it; the client's giving up closed every one of them.
    expect((await counters()).asked[question.transactionId]).toBe(3);
    await waitUntil(
      async () => (await counters()).held,
      (held) => held === 0,
    );
  });

  it("sets one payout's answer through its control endpoint, over the test amounts", async () => {
    const denied = request();
    const other = request();
    const res = await control('/sandbox/payout-authorization/decision', {
      transactionId: denied.transactionId,
      decision: 'deny',
      reason: 'daily payout limit reached',
    });
    expect(res.status).toBe(200);
    expect(await askPayoutAuthorization(settings(), denied)).toEqual({
      outcome: 'denied',
      reason: 'daily payout limit reached',
    });
    expect(await askPayoutAuthorization(settings(), other)).toEqual({ outcome: 'approved' });

    // A test amount's answer gives way to the one set, and a deny without reason gets one.
    const approved = request({ amountCentavos: 12_313 });
    await control('/sandbox/payout-authorization/decision', {
      transactionId: approved.transactionId,
      decision: 'approve',
    });
    expect(await askPayoutAuthorization(settings(), approved)).toEqual({ outcome: 'approved' });
    await control('/sandbox/payout-authorization/decision', {
      transactionId: other.transactionId,
      decision: 'deny',
    });
    expect(await askPayoutAuthorization(settings(), other)).toMatchObject({
      outcome: 'denied',
      reason: expect.stringMatching(/control endpoint/),
    });
    const unanswered = request();
    await control('/sandbox/payout-authorization/decision', {
      transactionId: unanswered.transactionId,
      decision: 'no_answer',
    });
    expect(await askPayoutAuthorization(settings({ timeoutMs: 200, attempts: 1 }), unanswered)).toMatchObject(
      {
        outcome: 'unanswered',
      },
    );
    expect((await counters()).decisions[denied.transactionId]).toEqual({
      decision: 'deny',
      reason: 'daily payout limit reached',
    });
  });

  it('refuses an unsigned or badly signed request (401), asked nothing', async () => {
    const question = request();
    const body = JSON.stringify(question);
    const before = await counters();
    const unsigned = await post(body, { 'content-type': 'application/json' });
    expect(unsigned.status).toBe(401);
    const other = await post(body, signedJsonRequest(body, OTHER_SECRET, { idPrefix: 'x', userAgent: 'x' }));
    expect(other.status).toBe(401);
    expect(JSON.stringify(await other.json())).toMatch(/signature/);
    // Signed, then changed on the way: the signature no longer covers the body.
    const tampered = await post(
      JSON.stringify({ ...question, amountCentavos: 1 }),
      signedJsonRequest(body, PAYOUT_AUTHORIZATION_DEV_SECRET, { idPrefix: 'x', userAgent: 'x' }),
    );
    expect(tampered.status).toBe(401);
    // pixflow's client takes a 401 as no valid answer, without asking again.
    expect(await askPayoutAuthorization(settings({ secret: OTHER_SECRET }), question)).toMatchObject({
      outcome: 'unanswered',
      problem: expect.stringMatching(/answered 401 \(attempt 1 of 3\)/),
    });
    const after = await counters();
    expect(after.refused - before.refused).toBe(4);
    expect(after.asked[question.transactionId]).toBeUndefined();
  });

  it('refuses a signed request off contract (400 naming the field), asked nothing', async () => {
    const question = request();
    const sign = (body: string) =>
      signedJsonRequest(body, PAYOUT_AUTHORIZATION_DEV_SECRET, { idPrefix: 'x', userAgent: 'x' });
    // The whole CPF has no place in the contract.
    const withCpf = JSON.stringify({ ...question, cpf: '52998224725' });
    const res = await post(withCpf, sign(withCpf));
    expect(res.status).toBe(400);
    expect(JSON.stringify(await res.json())).toMatch(/cpf/);
    const negative = JSON.stringify({ ...question, amountCentavos: -5 });
    const neg = await post(negative, sign(negative));
    expect(neg.status).toBe(400);
    expect(JSON.stringify(await neg.json())).toMatch(/amountCentavos/);
    const notJson = await post('{"transactionId":', sign('{"transactionId":'));
    expect(notJson.status).toBe(400);
    expect((await counters()).asked[question.transactionId]).toBeUndefined();
  });

  it('refuses bad control input with a 400 naming the field', async () => {
    const cases: [unknown, RegExp][] = [
      [{ decision: 'deny' }, /transactionId/],
      [{ transactionId: 'x', decision: 'maybe' }, /decision/],
      [{ transactionId: 'x', decision: 'approve', reason: 'why' }, /reason: only with decision deny/],
      [{ transactionId: 'x', decision: 'deny', reason: '   ' }, /reason/],
      [{ transactionId: 'x', decision: 'deny', reason: 'r'.repeat(501) }, /reason/],
    ];
    for (const [body, field] of cases) {
      const res = await control('/sandbox/payout-authorization/decision', body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(JSON.stringify(await res.json())).toMatch(field);
    }
    expect((await counters()).decisions.x).toBeUndefined();
  });

  it('forgets the answers set at a reset', async () => {
    const question = request();
    await control('/sandbox/payout-authorization/decision', {
      transactionId: question.transactionId,
      decision: 'deny',
    });
    await control('/sandbox/reset', {});
    expect(await askPayoutAuthorization(settings(), question)).toEqual({ outcome: 'approved' });
  });
});
