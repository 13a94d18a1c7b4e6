import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../common/passwords';
import { alertDecisions } from '../../contracts/alert';
import { livenessProgressSignal } from '../../contracts/onboarding';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { raiseAlert } from '../../db/alerts';
import { saveOperator } from '../../db/operators';
import { PAYOUT_APPROVALS_QUEUE, PAYOUT_DEADLINES_QUEUE } from '../../db/payout-queues';
import { eventually, freshCpf, json, onboardApproved } from '../api/support';
import { illFormedText, RUNS, unicodeText } from './arbitraries';
import {
  expectClientError,
  type HostileEnv,
  type RawAnswer,
  rawRequest,
  startHostileEnv,
  timeoutFor,
} from './support';

// The back office under hostile input from a signed-in reviewer or approver and from nobody:
// every answer is a 4xx page (never a 5xx, never a redirect that took something) naming the field
// where a field was wrong, no decision is recorded, the case, the payout and the alert stay open,
// and the process stays healthy.

const PASSWORD = 'hostile reviewer password';
const EMAIL = 'hostile.reviewer@example.com';
const APPROVER = 'hostile.approver@example.com';
/** Four eyes above R$ 200,00: the payout set up here waits for an approver's decision. */
const APPROVAL_ABOVE = 20_000;

let h: HostileEnv;
let cookie = '';
let token = '';
let approver = { cookie: '', token: '' };
let openCase = '';
let cpf = '';
let payout = { transactionId: '', workflowId: '' };
let alertId = '';

const cookieOf = (setCookie: string | string[] | undefined) =>
  (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
const tokenIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

async function signIn(email: string) {
  const form = await rawRequest(h.e.url, { method: 'GET', path: '/backoffice/sign-in' });
  const pre = cookieOf(form.headers['set-cookie']);
  const res = await rawRequest(h.e.url, {
    method: 'POST',
    path: '/backoffice/sign-in',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: tokenIn(form.text), email, password: PASSWORD }).toString(),
  });
  expect(res.status).toBe(303);
  const session = cookieOf(res.headers['set-cookie']);
  const home = await rawRequest(h.e.url, {
    method: 'GET',
    path: '/backoffice',
    headers: { cookie: session },
  });
  expect(home.status).toBe(200);
  return { cookie: session, token: tokenIn(home.text) };
}

/** A path segment as a browser or an attacker might send it: percent-encoded, or raw bytes. */
const hostileSegment = fc.oneof(
  unicodeText.map((s) => {
    try {
      return encodeURIComponent(s);
    } catch {
      return '%ED%A0%80';
    }
  }),
  fc.constantFrom(
    '%00',
    'a%00b',
    '%ED%A0%80',
    '%',
    '%zz',
    '..%2F..%2Fetc%2Fpasswd',
    'x'.repeat(5_000),
    '%C0%AF',
  ),
);

/** A form value: junk text, ill-formed text, or far too long. */
const hostileValue = fc.oneof(
  unicodeText,
  illFormedText,
  fc.constant(''),
  fc.string({ minLength: 1001, maxLength: 1200 }),
  fc.constantFrom('approve ', 'APPROVE', 'accept', 'return', '0', '[]'),
);

/** URL-encodes what it can; what it cannot (a lone surrogate) goes as NUL, which must be refused too. */
const encodeForm = (fields: Record<string, string>) =>
  Object.entries(fields)
    .map(([k, v]) => {
      let value: string;
      try {
        value = encodeURIComponent(v);
      } catch {
        value = '%00';
      }
      return `${encodeURIComponent(k)}=${value}`;
    })
    .join('&');

/** A page refusing hostile input: 4xx HTML, never a 5xx or a redirect. */
const expectRefusedPage = (a: RawAnswer, what: string) => expectClientError(a, what, /^text\/html/);

/**
 * A 400 page naming what was wrong, and only fields that were: by the form's name (reason), or
 * where it came (form.reason, query.status) when the text could not be stored at all.
 */
function expectFieldsNamed(a: RawAnswer, what: string, wrong: string[]) {
  const context = expectClientError(a, what, /^text\/html/);
  expect(a.status, context).toBe(400);
  const named = [...a.text.matchAll(/data-field="([^"]*)"/g)].map((m) => m[1] ?? '');
  expect(named.length, context).toBeGreaterThan(0);
  for (const name of named) expect(wrong.includes(name.replace(/^(form|query)\./, '')), context).toBe(true);
}

/** Too long for a reason or a note (1000 characters), whatever trimming takes off. */
const overLong = fc.string({ minLength: 1001, maxLength: 1200 }).map((v) => `x${v}x`);

/** A valid choice made junk: the decision itself is never one that may be taken. */
const junkChoice = (valid: readonly string[]) => hostileValue.map((v) => (valid.includes(v) ? `${v}!` : v));

const countOf = async (sql: string, params: unknown[]) =>
  Number((await h.e.pool.query(sql, params)).rows[0]?.n ?? 0);

beforeAll(async () => {
  h = await startHostileEnv({
    BACKOFFICE_SIGNIN_ATTEMPTS: '1000000',
    PAYOUT_APPROVAL_ABOVE_CENTAVOS: String(APPROVAL_ABOVE),
  });
  const passwordHash = await hashPassword(PASSWORD);
  await saveOperator(h.e.pool, { email: EMAIL, name: 'Hostile', role: 'reviewer', passwordHash });
  await saveOperator(h.e.pool, { email: APPROVER, name: 'Hostile approver', role: 'approver', passwordHash });
  ({ cookie, token } = await signIn(EMAIL));
  approver = await signIn(APPROVER);
  cpf = freshCpf();
  const started = await h.e.call('POST', '/v1/onboardings', {
    body: { cpf, plan: 'plan_basic', event: 'onboarding' },
  });
  openCase = (await json<{ workflowId: string }>(started)).workflowId;
  const status = async () =>
    (await json<{ state: { status: string } }>(await h.e.call('GET', `/v1/onboardings/${cpf}`))).state.status;
  await eventually(status, (s) => s === 'awaiting_liveness');
  await h.e.temporal.workflow
    .getHandle(openCase)
    .signal(livenessProgressSignal, { statusVerification: 'manual_approve_pending' });
  await eventually(status, (s) => s === 'awaiting_review');

  // A payout over the approval bound, to the person's own CPF key: it waits for approvers.
  const payee = freshCpf();
  await onboardApproved(h.e, payee);
  const transactionId = `hostile-${randomBytes(5).toString('hex')}`;
  const asked = await h.e.call('POST', '/v1/withdrawals', {
    body: {
      transactionId,
      client: { externalId: `hostile-${payee}`, cpf: payee, email: 'ana@example.com', name: 'Ana Souza' },
      pixKey: payee,
      pixType: 'CPF',
      amountCentavos: APPROVAL_ABOVE + 1_000,
    },
  });
  expect(asked.status).toBe(202);
  payout = { transactionId, workflowId: withdrawalWorkflowId(transactionId) };
  await eventually(payoutStatus, (s) => s === 'awaiting_approval');

  // An open alert, as the monitor writes it.
  alertId = `alr_${randomBytes(16).toString('hex')}`;
  await raiseAlert(h.e.pool, {
    id: alertId,
    rule: 'structuring',
    cpfHash: 'hostile-alert-person',
    cpfMasked: '***.456.789-**',
    flowId: payout.workflowId,
    flowIds: [payout.workflowId],
    facts: { count: 3, totalCentavos: 30_000 },
  });
}, 180_000);

const payoutStatus = async () =>
  (
    await json<{ state: { status: string } }>(
      await h.e.call('GET', `/v1/withdrawals/${payout.transactionId}`),
    )
  ).state.status;

afterAll(async () => {
  await h?.close();
});

/** A segment as the server reads it, or undefined when it is not valid percent-encoding. */
const safeDecode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

describe('the back office under hostile input', () => {
  it(
    'pages asked with junk ids and filters answer 4xx, never 5xx',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          hostileSegment,
          fc.constantFrom(
            'flows',
            'customers',
            'queues',
            'audit.csv?case=',
            'queues/failed?cpf=',
            'queues/failed?since=',
            'customers?cpf=',
            'audit?who=',
            'audit?case=',
            'audit?from=',
            'audit?size=',
            'audit?before=',
            'search?q=',
          ),
          async (junk, where) => {
            const path = where.includes('=') ? `/backoffice/${where}${junk}` : `/backoffice/${where}/${junk}`;
            const a = await rawRequest(h.e.url, { method: 'GET', path, headers: { cookie } });
            // A well-formed case id is an export of its actions: none but the exports asked here.
            if (where.startsWith('audit.csv') && a.status === 200) {
              // Only white space (trimmed, as every filter is) is no filter: the whole trail.
              if (safeDecode(junk)?.trim() === '') return;
              for (const row of a.text.trim().split('\n').slice(1))
                expect(row, path).toContain(',audit.export,');
              return;
            }
            // A well-formed filter or search is a page of what it found (a search may find nothing).
            if (/^(audit\?(who|case)|search)/.test(where) && [200, 404].includes(a.status)) return;
            expectRefusedPage(a, `GET ${path.slice(0, 120)}`);
          },
        ),
        { numRuns: RUNS },
      );
    },
    timeoutFor(),
  );

  it(
    'decision forms with junk fields are refused, and the case stays open with nothing recorded',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({ decision: hostileValue, reason: hostileValue, expected: hostileValue }),
          fc.constantFrom('review', 'resolution'),
          async (fields, kind) => {
            // A junk decision, or a valid one with a junk reason: never a decision that may be taken.
            const decision =
              kind === 'review' && fields.decision === 'approve' ? 'approve!' : fields.decision;
            const a = await rawRequest(h.e.url, {
              method: 'POST',
              path: `/backoffice/flows/${openCase}/${kind}`,
              headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
              body: encodeForm({ _csrf: token, ...fields, decision }),
            });
            expectRefusedPage(a, `POST ${kind} ${JSON.stringify(fields).slice(0, 120)}`);
          },
        ),
        { numRuns: RUNS },
      );
      const state = await json<{ state: { status: string } }>(
        await h.e.call('GET', `/v1/onboardings/${cpf}`),
      );
      expect(state.state.status).toBe('awaiting_review');
      const done = await h.e.pool.query(
        "SELECT count(*)::int AS n FROM operator_actions WHERE outcome = 'done' AND case_id = $1",
        [openCase],
      );
      expect(done.rows[0]?.n).toBe(0);
    },
    timeoutFor(),
  );

  it(
    'payout decisions with junk fields or on junk ids are refused naming the field; the payout still waits, nothing sent or recorded',
    async () => {
      const form = fc.oneof(
        fc.record({ decision: junkChoice(['approve', 'refuse']), reason: hostileValue }).map((f) => ({
          f,
          wrong: ['decision', 'reason'],
        })),
        fc
          .record({
            decision: fc.constant('refuse'),
            reason: fc.oneof(fc.constantFrom('', '   '), overLong, illFormedText),
          })
          .map((f) => ({ f, wrong: ['reason'] })),
        fc
          .record({ decision: fc.constant('approve'), reason: fc.oneof(overLong, illFormedText) })
          .map((f) => ({ f, wrong: ['reason'] })),
      );
      await fc.assert(
        fc.asyncProperty(form, async ({ f, wrong }) => {
          const a = await rawRequest(h.e.url, {
            method: 'POST',
            path: `/backoffice/flows/${payout.workflowId}/payout-decision`,
            headers: { cookie: approver.cookie, 'content-type': 'application/x-www-form-urlencoded' },
            body: encodeForm({ _csrf: approver.token, ...f }),
          });
          expectFieldsNamed(a, `POST payout-decision ${JSON.stringify(f).slice(0, 120)}`, wrong);
        }),
        { numRuns: RUNS },
      );
      // A decision that may be taken, on a payout that is not there.
      await fc.assert(
        fc.asyncProperty(hostileSegment, async (junk) => {
          const path = `/backoffice/flows/${junk}/payout-decision`;
          const a = await rawRequest(h.e.url, {
            method: 'POST',
            path,
            headers: { cookie: approver.cookie, 'content-type': 'application/x-www-form-urlencoded' },
            body: encodeForm({ _csrf: approver.token, decision: 'approve', reason: '' }),
          });
          expectRefusedPage(a, `POST ${path.slice(0, 120)}`);
        }),
        { numRuns: RUNS },
      );
      expect(await payoutStatus()).toBe('awaiting_approval');
      const row = await h.e.pool.query('SELECT status, details FROM flows WHERE workflow_id = $1', [
        payout.workflowId,
      ]);
      expect(row.rows[0]).toMatchObject({ status: 'awaiting_approval', details: { approvedBy: [] } });
      const sandbox = (await (await fetch(`${h.e.sandbox.url}/sandbox/state`)).json()) as {
        counters: { payouts: Record<string, number> };
      };
      expect(sandbox.counters.payouts[payout.transactionId] ?? 0).toBe(0);
      expect(
        await countOf(
          `SELECT count(*)::int AS n FROM operator_actions WHERE action LIKE 'withdrawal.%' OR case_id = $1`,
          [payout.workflowId],
        ),
      ).toBe(0);
    },
    timeoutFor(2),
  );

  it(
    'alert decisions with junk fields or on junk ids are refused naming the field; the alert stays open, nothing recorded',
    async () => {
      const form = fc.oneof(
        fc.record({ decision: junkChoice(alertDecisions), note: hostileValue }).map((f) => ({
          f,
          wrong: ['decision', 'note'],
        })),
        fc
          .record({
            decision: fc.constantFrom(...alertDecisions),
            note: fc.oneof(fc.constantFrom('', '   '), overLong, illFormedText),
          })
          .map((f) => ({ f, wrong: ['note'] })),
      );
      await fc.assert(
        fc.asyncProperty(form, async ({ f, wrong }) => {
          const a = await rawRequest(h.e.url, {
            method: 'POST',
            path: `/backoffice/alerts/${alertId}/decision`,
            headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
            body: encodeForm({ _csrf: token, ...f }),
          });
          expectFieldsNamed(a, `POST alert decision ${JSON.stringify(f).slice(0, 120)}`, wrong);
        }),
        { numRuns: RUNS },
      );
      await fc.assert(
        fc.asyncProperty(hostileSegment, async (junk) => {
          const path = `/backoffice/alerts/${junk}/decision`;
          const a = await rawRequest(h.e.url, {
            method: 'POST',
            path,
            headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
            body: encodeForm({ _csrf: token, decision: 'reviewed', note: 'nothing to report' }),
          });
          expectRefusedPage(a, `POST ${path.slice(0, 120)}`);
        }),
        { numRuns: RUNS },
      );
      const alert = await h.e.pool.query('SELECT status, decided_by, note FROM alerts WHERE id = $1', [
        alertId,
      ]);
      expect(alert.rows[0]).toEqual({ status: 'open', decided_by: null, note: null });
      expect(
        await countOf(`SELECT count(*)::int AS n FROM operator_actions WHERE action LIKE 'alert.%'`, []),
      ).toBe(0);
    },
    timeoutFor(2),
  );

  it(
    'the alerts queue and its CSV export asked with junk filters answer 400 naming the filter; no export is recorded',
    async () => {
      const exports = () =>
        countOf(`SELECT count(*)::int AS n FROM operator_actions WHERE action = 'alert.export'`, []);
      const before = await exports();
      await fc.assert(
        fc.asyncProperty(
          hostileSegment,
          fc.constantFrom('status', 'rule', 'cpf', 'from', 'to'),
          fc.constantFrom('alerts', 'alerts.csv'),
          async (junk, filter, where) => {
            const path = `/backoffice/${where}?${filter}=${junk}`;
            const a = await rawRequest(h.e.url, { method: 'GET', path, headers: { cookie } });
            expectFieldsNamed(a, `GET ${path.slice(0, 120)}`, [filter]);
          },
        ),
        { numRuns: RUNS },
      );
      // Filters well-formed one by one but not together, or given twice.
      for (const [query, wrong] of [
        ['from=02/01/2026&to=01/01/2026', 'to'],
        ['status=open&status=reviewed', 'status'],
        ['rule=structuring&rule=new_account', 'rule'],
      ] as const) {
        for (const where of ['alerts', 'alerts.csv']) {
          const path = `/backoffice/${where}?${query}`;
          expectFieldsNamed(await rawRequest(h.e.url, { method: 'GET', path, headers: { cookie } }), path, [
            wrong,
          ]);
        }
      }
      expect(await exports()).toBe(before);
      // The same filters valid: the export answers, and is recorded.
      const ok = await rawRequest(h.e.url, {
        method: 'GET',
        path: '/backoffice/alerts.csv?status=open&rule=structuring&from=01/01/2026',
        headers: { cookie },
      });
      expect(ok.status).toBe(200);
      expect(ok.text).toContain(alertId);
      expect(await exports()).toBe(before + 1);
    },
    timeoutFor(),
  );

  it(
    'the payout queues take no input: junk after their path is 4xx, junk in their query changes nothing, never 5xx',
    async () => {
      await fc.assert(
        fc.asyncProperty(
          hostileSegment,
          fc.constantFrom(PAYOUT_APPROVALS_QUEUE, PAYOUT_DEADLINES_QUEUE),
          fc.boolean(),
          async (junk, queue, inQuery) => {
            const path = inQuery
              ? `/backoffice/queues/${queue}?limit=${junk}`
              : `/backoffice/queues/${queue}/${junk}`;
            const a = await rawRequest(h.e.url, { method: 'GET', path, headers: { cookie } });
            // Ignored, unless Postgres could not hold it (NUL, a lone surrogate): then named.
            if (inQuery && a.status === 200) expect(a.text, path).toContain(payout.workflowId);
            else if (inQuery) expectFieldsNamed(a, `GET ${path.slice(0, 120)}`, ['limit']);
            else expectRefusedPage(a, `GET ${path.slice(0, 120)}`);
          },
        ),
        { numRuns: RUNS },
      );
    },
    timeoutFor(),
  );

  it(
    'sign-in forms with junk fields are refused; none signs in',
    async () => {
      await fc.assert(
        fc.asyncProperty(fc.record({ email: hostileValue, password: hostileValue }), async (fields) => {
          const form = await rawRequest(h.e.url, { method: 'GET', path: '/backoffice/sign-in' });
          const a = await rawRequest(h.e.url, {
            method: 'POST',
            path: '/backoffice/sign-in',
            headers: {
              cookie: cookieOf(form.headers['set-cookie']),
              'content-type': 'application/x-www-form-urlencoded',
            },
            body: encodeForm({ _csrf: tokenIn(form.text), ...fields }),
          });
          expectRefusedPage(a, `POST sign-in ${JSON.stringify(fields).slice(0, 120)}`);
        }),
        { numRuns: RUNS },
      );
      await h.expectHealthy();
    },
    timeoutFor(2),
  );
});
