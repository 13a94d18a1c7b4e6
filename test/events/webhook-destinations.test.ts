import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiEnv, expectProblem, startApiEnv } from '../api/support';

// Where webhook endpoints may point, through the real API with production's settings: no
// loopback, no private range listed. Every IPv6 spelling of an IPv4 or special address is a 400
// naming body.url, on create and on update, and nothing is saved.

let e: ApiEnv;
beforeAll(async () => {
  e = await startApiEnv({}, { env: { WEBHOOK_ALLOW_LOOPBACK: 'false', WEBHOOK_ALLOWED_CIDRS: '' } });
}, 120_000);
afterAll(() => e?.close());

const refused = [
  // IPv4-compatible (::/96): loopback, the cloud metadata address, a private one, a public one.
  'https://[::127.0.0.1]/hooks',
  'https://[::a9fe:a9fe]/hooks',
  'https://[::a00:1]/hooks',
  'https://[::8.8.8.8]/hooks',
  // IPv4-mapped, NAT64 (both prefixes), 6to4 and Teredo.
  'https://[::ffff:127.0.0.1]/hooks',
  'https://[::ffff:a9fe:a9fe]/hooks',
  'https://[64:ff9b::a9fe:a9fe]/hooks',
  'https://[64:ff9b:1::a00:1]/hooks',
  'https://[2002:a9fe:a9fe::1]/hooks',
  'https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hooks',
  // Outside global unicast, and special purpose inside it.
  'https://[::]/hooks',
  'https://[::1]/hooks',
  'https://[fe80::1]/hooks',
  'https://[fc00::1]/hooks',
  'https://[ff02::1]/hooks',
  'https://[4000::1]/hooks',
  'https://[2001:db8::1]/hooks',
  'https://[3fff::1]/hooks',
  'https://[2001:20::1]/hooks',
  'https://[5f00::1]/hooks',
];

const namesUrl = async (res: Response, url: string) => {
  const p = await expectProblem(res, 400, 'validation-error');
  expect(
    p.invalid_params?.map((i) => i.name),
    url,
  ).toEqual(['body.url']);
};

describe('webhook endpoint destinations with production settings', () => {
  it('refuses every IPv6 form of a non-global address on create and update; nothing is saved', async () => {
    const created = await e.call('POST', '/v1/webhook-endpoints', {
      body: { url: 'https://[2606:4700:4700::1111]/hooks', events: ['*'] },
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const before = await (await e.call('GET', '/v1/webhook-endpoints')).json();

    for (const url of refused) {
      await namesUrl(await e.call('POST', '/v1/webhook-endpoints', { body: { url, events: ['*'] } }), url);
      await namesUrl(await e.call('PATCH', `/v1/webhook-endpoints/${id}`, { body: { url } }), url);
    }

    expect(await (await e.call('GET', '/v1/webhook-endpoints')).json()).toEqual(before);
  });
});
