import type { AddressInfo } from 'node:net';
import { type ProxyTracerProvider, trace } from '@opentelemetry/api';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../common/config';
import {
  setupTracing,
  tracingBundleModules,
  tracingClientInterceptors,
  tracingWorkerOptions,
} from '../../common/tracing';
import { requestTracing } from '../../http/request-tracing';
import { type RunningSandbox, startSandbox } from '../../sandbox';
import { connectorFor } from '../helpers/sandbox-client';

// Tracing off (no OTEL_EXPORTER_OTLP_ENDPOINT): no tracer provider, no interceptors, no sink,
// and the spans the code still asks @opentelemetry/api for are no-ops that record nothing.

let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox();
});
afterAll(async () => {
  await sandbox?.close();
});

describe('tracing off', () => {
  it('is off when the endpoint is unset or empty (compose passes an empty value)', () => {
    expect(setupTracing('pixflow-api', loadConfig({}))).toBeUndefined();
    expect(setupTracing('pixflow-api', loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: '' }))).toBeUndefined();
    expect(tracingClientInterceptors(undefined)).toBeUndefined();
    expect(tracingWorkerOptions(undefined)).toEqual({});
    expect(tracingBundleModules(undefined)).toEqual([]);
    // Nothing registered globally: no SDK, so no processor or exporter exists to send anything.
    const registered = trace.getTracerProvider() as ProxyTracerProvider;
    expect(registered.getDelegate().constructor.name).toBe('NoopTracerProvider');
  });

  it('refuses an endpoint that is not an http(s) URL', () => {
    expect(() => loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toThrow(ConfigError);
  });

  it('provider calls and API requests get no-op spans that record nothing', async () => {
    const recording: boolean[] = [];
    const provider = connectorFor(sandbox.url, {
      timeoutMs: 5_000,
      fetch: (input, init) => {
        recording.push(trace.getActiveSpan()?.isRecording() ?? false);
        return fetch(input, init);
      },
    });
    await provider.kyc('63401825771', 'plan_basic');
    expect(recording.length).toBeGreaterThan(0);
    expect(recording.some(Boolean)).toBe(false);

    const app = express();
    app.use(requestTracing());
    app.get('/probe', (_req, res) => {
      res.json({ recording: trace.getActiveSpan()?.isRecording() ?? false });
    });
    const server = await new Promise<ReturnType<typeof app.listen>>((resolve) => {
      const s = app.listen(0, '127.0.0.1', () => resolve(s));
    });
    const res = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/probe`);
    expect(await res.json()).toEqual({ recording: false });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
