import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../common/passwords';
import { livenessProgressSignal } from '../../contracts/onboarding';
import { saveOperator } from '../../db/operators';
import { eventually, freshCpf, json } from '../api/support';
import { illFormedText, RUNS, unicodeText } from './arbitraries';
import {
  expectClientError,
  type HostileEnv,
  type RawAnswer,
  rawRequest,
  startHostileEnv,
  timeoutFor,
} from './support';

// The back office under hostile input from a signed-in reviewer and from nobody: every answer is
// a 4xx page (never a 5xx, never a redirect that took something), no decision is recorded, the
// case stays open, and the process stays healthy.

const PASSWORD = 'hostile reviewer password';
const EMAIL = 'hostile.reviewer@example.com';

let h: HostileEnv;
let cookie = '';
let token = '';
let openCase = '';
let cpf = '';

const cookieOf = (setCookie: string | string[] | undefined) =>
  (Array.isArray(setCookie) ? setCookie[0] : setCookie)?.split(';')[0] ?? '';
const tokenIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

async function signIn() {
  const form = await rawRequest(h.e.url, { method: 'GET', path: '/backoffice/sign-in' });
  const pre = cookieOf(form.headers['set-cookie']);
  const res = await rawRequest(h.e.url, {
    method: 'POST',
    path: '/backoffice/sign-in',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: tokenIn(form.text), email: EMAIL, password: PASSWORD }).toString(),
  });
  expect(res.status).toBe(303);
  cookie = cookieOf(res.headers['set-cookie']);
  const home = await rawRequest(h.e.url, { method: 'GET', path: '/backoffice', headers: { cookie } });
  expect(home.status).toBe(200);
  token = tokenIn(home.text);
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

beforeAll(async () => {
  h = await startHostileEnv({ BACKOFFICE_SIGNIN_ATTEMPTS: '1000000' });
  await saveOperator(h.e.pool, {
    email: EMAIL,
    name: 'Hostile',
    role: 'reviewer',
    passwordHash: await hashPassword(PASSWORD),
  });
  await signIn();
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
}, 120_000);

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
