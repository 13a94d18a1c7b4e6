import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerClientError } from '../../http/problem';

// Node rejects oversized headers before Express sees the request; the API still answers problem+json.
const server = http.createServer((_req, res) => res.end('ok'));
server.on('clientError', answerClientError);
let url = '';
beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
});

describe('client errors before routing', () => {
  it('headers over the limit get 431 problem+json', async () => {
    const res = await fetch(`${url}/v1/deposits`, { headers: { 'x-big': 'a'.repeat(20_000) } });
    expect(res.status).toBe(431);
    expect(res.headers.get('content-type')).toBe('application/problem+json');
    expect(await res.json()).toMatchObject({ status: 431, title: 'Request headers too large' });
  });
});
