import http from 'node:http';
import { Writable } from 'node:stream';
import pino from 'pino';
import { expect } from 'vitest';
import { cpfHash } from '../../common/pii';
import { depositWorkflowId } from '../../contracts/deposit';
import { onboardingWorkflowId } from '../../contracts/onboarding';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { type ApiEnv, PII_KEY, startApiEnv } from '../api/support';
import { RUNS } from './arbitraries';

// The real app (startApiEnv: API + worker + sandbox) for hostile requests, a raw HTTP client
// that sends paths and bodies exactly as given (fetch would normalise `..` and re-encode), and
// the checks every answer must pass.

export const WEBHOOK_SECRET = 'hostile-webhook-secret-0123456789';
export const PARTNER_ID = 'hostile-partner';

/** A test timeout that grows with HOSTILE_RUNS. */
export const timeoutFor = (requestsPerRun = 1) => 60_000 + RUNS * requestsPerRun * 60;

export interface RawAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });

export function rawRequest(
  baseUrl: string,
  req: { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer },
): Promise<RawAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const r = http.request(
      {
        host: url.hostname,
        port: url.port,
        method: req.method,
        path: req.path,
        headers: {
          ...req.headers,
          ...(req.body !== undefined ? { 'content-length': String(Buffer.byteLength(req.body)) } : {}),
        },
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    if (req.body !== undefined) r.write(req.body);
    r.end();
  });
}

/** Counts for the report: what was sent and how it was answered. */
export const stats = { requests: 0, status4xx: 0, status5xx: 0, other: 0, flowsStarted: 0, signals: 0 };

/** A 4xx of the given content type, counted for the report; the context to name it by. */
export function expectClientError(a: RawAnswer, what: string, contentType: RegExp): string {
  stats.requests++;
  if (a.status >= 500) stats.status5xx++;
  else if (a.status >= 400) stats.status4xx++;
  else stats.other++;
  const context = `${what} -> ${a.status} ${a.text.slice(0, 300)}`;
  expect(a.status, context).toBeGreaterThanOrEqual(400);
  expect(a.status, context).toBeLessThan(500);
  expect(a.headers['content-type'] ?? '(none)', context).toMatch(contentType);
  return context;
}

/** Every answer to hostile input: 4xx, problem+json, a body with type, title and status. */
export function expectRefused(a: RawAnswer, what: string) {
  const context = expectClientError(a, what, /^application\/problem\+json/);
  const body = JSON.parse(a.text) as { type?: unknown; title?: unknown; status?: unknown };
  expect(typeof body.type, context).toBe('string');
  expect(typeof body.title, context).toBe('string');
  expect(body.status, context).toBe(a.status);
}

/** Error-level log lines of the app (an unhandled error is logged there before its 500). */
export function capturingLogger() {
  const errors: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      errors.push(String(chunk));
      cb();
    },
  });
  return { log: pino({ level: 'error' }, stream), errors };
}

export interface HostileEnv {
  e: ApiEnv;
  errors: string[];
  unhandled: unknown[];
  /** The workflow ids a body names (txid, transactionId, CPF), where it names one. */
  idsNamedBy(route: 'onboarding' | 'deposit' | 'withdrawal', body: unknown): string[];
  /** No workflow of these ids exists in Temporal, and no flows row either. */
  expectNoFlows(ids: string[], what: string): Promise<void>;
  /** Nothing ever started on this env's task queue. */
  expectNothingOnQueue(): Promise<void>;
  expectHealthy(): Promise<void>;
  close(): Promise<void>;
}

export async function startHostileEnv(env: Record<string, string> = {}): Promise<HostileEnv> {
  const { log, errors } = capturingLogger();
  const unhandled: unknown[] = [];
  const onUnhandled = (err: unknown) => unhandled.push(err);
  process.on('unhandledRejection', onUnhandled);
  process.on('uncaughtException', onUnhandled);
  const e = await startApiEnv(
    {},
    {
      log,
      env: {
        WEBHOOK_SECRET,
        WEBHOOK_PARTNER_ID: PARTNER_ID,
        API_RATE_LIMIT_PER_MINUTE: '1000000',
        // Thousands of wrong keys and secrets from one address: their answers are what is tested here.
        AUTH_FAILURE_LIMIT: '1000000',
        ...env,
      },
    },
  );
  // Ids Postgres could hold at all (no NUL, well-formed): any other cannot name a flow.
  const str = (v: unknown) =>
    typeof v === 'string' &&
    v.length > 0 &&
    v.length < 1_000 &&
    !/[\ud800-\udfff]/.test(v) &&
    !v.includes('\u0000')
      ? v
      : undefined;
  return {
    e,
    errors,
    unhandled,
    idsNamedBy(route, body) {
      if (typeof body !== 'object' || body === null) return [];
      const b = body as Record<string, unknown>;
      const client = (typeof b.client === 'object' && b.client) || {};
      const ids: string[] = [];
      if (route === 'onboarding') {
        const cpf = str(b.cpf);
        if (cpf) ids.push(onboardingWorkflowId(cpfHash(cpf, PII_KEY)));
      }
      if (route === 'deposit') {
        const txid = str(b.txid);
        if (txid) ids.push(depositWorkflowId(txid));
      }
      if (route === 'withdrawal') {
        const id = str(b.transactionId);
        if (id) ids.push(withdrawalWorkflowId(id));
      }
      const cpf = str((client as Record<string, unknown>).cpf);
      if (cpf) ids.push(onboardingWorkflowId(cpfHash(cpf, PII_KEY)));
      return ids;
    },
    async expectNoFlows(ids, what) {
      for (const id of ids) {
        const started = await e.workflowExists(id);
        if (started) stats.flowsStarted++;
        expect(started, `${what}: workflow ${id} exists`).toBe(false);
      }
      if (ids.length > 0) {
        const rows = await e.pool.query('SELECT workflow_id FROM flows WHERE workflow_id = ANY($1)', [ids]);
        expect(rows.rowCount, `${what}: flows rows`).toBe(0);
      }
    },
    async expectNothingOnQueue() {
      // The env's reconciler runs on it from the start: anything else was started by a request.
      const { count } = await e.temporal.workflow.count(
        `TaskQueue = '${e.taskQueue}' AND WorkflowType != 'reconcilerWorkflow'`,
      );
      stats.flowsStarted += count;
      expect(count, 'workflows started on the test task queue').toBe(0);
    },
    async expectHealthy() {
      const res = await fetch(`${e.url}/healthz`);
      expect(res.status).toBe(200);
      expect(errors, 'error-level log lines').toEqual([]);
      expect(unhandled, 'unhandled errors').toEqual([]);
    },
    async close() {
      process.off('unhandledRejection', onUnhandled);
      process.off('uncaughtException', onUnhandled);
      await e.close();
    },
  };
}

/** One line for the run's figures (the full run's report quotes it). */
export function printStats(label: string) {
  console.log(`[hostile ${label}] runs/route=${RUNS} ${JSON.stringify(stats)}`);
}
