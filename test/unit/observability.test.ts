import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiMetrics } from '../../common/metrics';
import { requestObservability } from '../../http/observability';
import { observabilityLogLine } from '../helpers/log-capture';

// The API's access log and request metrics, on a tiny app with the same middleware.

const lines: string[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    lines.push(String(chunk));
    done();
  },
});
const metrics = createApiMetrics();
const app = express();
app.use(requestObservability(pino({ level: 'info' }, sink), metrics));
app.get('/v1/onboardings/:cpf', (_req, res) => {
  res.json({ workflowId: 'onboarding-abc123', state: {} });
});
let base = '';
let server: ReturnType<typeof app.listen>;
beforeAll(async () => {
  server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.close();
});

describe('request observability', () => {
  it('logs the route pattern (never the CPF in the path), the request id and the workflow id', async () => {
    const res = await fetch(`${base}/v1/onboardings/63401825771`, { headers: { 'x-request-id': 'req-42' } });
    expect(res.headers.get('x-request-id')).toBe('req-42');
    const line = observabilityLogLine(lines, 'req-42');
    expect(line).toMatchObject({
      requestId: 'req-42',
      route: '/v1/onboardings/:cpf',
      status: 200,
      workflowId: 'onboarding-abc123',
    });
    expect(lines.join('')).not.toContain('63401825771');
  });

  it('makes a request id when none (or a hostile one) is given', async () => {
    const res = await fetch(`${base}/v1/onboardings/1`, {
      headers: { 'x-request-id': 'bad id; <script>' },
    });
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('counts requests by route and status', async () => {
    await fetch(`${base}/nowhere`);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(
      /pixflow_http_requests_total\{method="GET",route="\/v1\/onboardings\/:cpf",status="200"\} [1-9]/,
    );
    expect(text).toMatch(/pixflow_http_requests_total\{method="GET",route="unmatched",status="404"\} 1/);
    expect(text).toContain('pixflow_http_request_duration_seconds_bucket');
  });
});
