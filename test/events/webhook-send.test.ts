import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { EVENTS_DEFAULTS } from '../../common/config';
import { retryAt } from '../../events/outbox-relay';
import { sendWebhook } from '../../events/send-webhook';

const policy = { allowLoopback: true, allowedCidrs: [] };
const secret = `whsec_${Buffer.alloc(24, 7).toString('base64')}`;
const servers: http.Server[] = [];

async function serve(handler: http.RequestListener): Promise<string> {
  const server = http.createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
}
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
});

describe('retries', () => {
  it('follow the schedule with ±20% jitter, then give up', () => {
    const now = 1_000_000;
    for (let i = 0; i < 200; i++) {
      const at = retryAt(2, [5_000, 300_000], now)?.getTime() ?? 0;
      expect(at - now).toBeGreaterThanOrEqual(240_000);
      expect(at - now).toBeLessThanOrEqual(360_000);
    }
    expect(retryAt(3, [5_000, 300_000], now)).toBeUndefined();
  });

  it('by default, last about three days', () => {
    const total = EVENTS_DEFAULTS.retryScheduleMs.reduce((a, b) => a + b, 0);
    expect(total / 86_400_000).toBeGreaterThan(2.8);
    expect(total / 86_400_000).toBeLessThan(3.2);
  });
});

describe('one attempt', () => {
  it('is signed the Standard Webhooks way, and a 2xx is delivered', async () => {
    let verified: unknown;
    const url = await serve((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        verified = new Webhook(secret).verify(body, req.headers as Record<string, string>);
        res.writeHead(204).end();
      });
    });
    const r = await sendWebhook(
      { url, id: 'evt_1', body: '{"type":"x"}', secrets: [secret] },
      { timeoutMs: 2_000, policy },
    );
    expect(r).toMatchObject({ outcome: 'delivered', statusCode: 204, error: null });
    expect(verified).toEqual({ type: 'x' });
  });

  it('ends at the timeout when the receiver sends its headers and then nothing', async () => {
    const url = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    });
    const r = await sendWebhook(
      { url, id: 'evt_2', body: '{}', secrets: [secret] },
      { timeoutMs: 300, policy },
    );
    expect(r.outcome).toBe('failed');
    expect(r.error).toMatch(/no answer within 300 ms/);
    expect(r.durationMs).toBeLessThan(2_000);
  });

  it('410 is gone, 500 failed, and a refused address is never called', async () => {
    const gone = await serve((_req, res) => res.writeHead(410).end());
    expect(
      (await sendWebhook({ url: gone, id: 'e', body: '{}', secrets: [secret] }, { timeoutMs: 2_000, policy }))
        .outcome,
    ).toBe('gone');
    const broken = await serve((_req, res) => res.writeHead(500).end('no'));
    expect(
      await sendWebhook(
        { url: broken, id: 'e', body: '{}', secrets: [secret] },
        { timeoutMs: 2_000, policy },
      ),
    ).toMatchObject({
      outcome: 'failed',
      statusCode: 500,
      response: 'no',
    });
    const strict = { allowLoopback: false, allowedCidrs: [] };
    const refused = await sendWebhook(
      { url: broken, id: 'e', body: '{}', secrets: [secret] },
      { timeoutMs: 2_000, policy: strict },
    );
    expect(refused).toMatchObject({ outcome: 'failed', statusCode: null });
    expect(refused.error).toMatch(/url refused/);
  });
});
