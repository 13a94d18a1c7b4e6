import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { API_KEY, CODEC_TOKEN } from '../api/support';
import {
  anyJunk,
  badCpf,
  badCredential,
  badPixPair,
  type Credential,
  depositMutations,
  type HostileBody,
  hostileBody,
  hostileSegment,
  malformedBody,
  notAString,
  onboardingMutations,
  RUNS,
  requiredFields,
  reviewMutations,
  toJsonText,
  tooLong,
  unicodeText,
  validCpf,
  validDeposit,
  validOnboarding,
  validReview,
  validWithdrawal,
  wireEncode,
  withdrawalMutations,
  wrongContentType,
} from './arbitraries';
import {
  expectRefused,
  type HostileEnv,
  printStats,
  rawRequest,
  startHostileEnv,
  timeoutFor,
} from './support';

// Every /v1 route (and /codec) under generated hostile requests: each answer is 4xx
// problem+json, no flow starts, and the process stays healthy.

let h: HostileEnv;

beforeAll(async () => {
  h = await startHostileEnv();
});
afterAll(async () => {
  if (!h) return;
  await h.expectNothingOnQueue();
  await h.expectHealthy();
  printStats('api');
  await h.close();
});

const good: Credential = { header: `Bearer ${API_KEY}`, label: 'valid key' };

interface Req {
  method: string;
  path: string;
  credential: Credential;
  contentType?: string;
  body?: HostileBody;
}

async function send(r: Req) {
  const headers: Record<string, string> = {};
  if (r.credential.header !== undefined) headers.authorization = r.credential.header;
  if (r.contentType !== undefined) headers['content-type'] = r.contentType;
  const answer = await rawRequest(h.e.url, { method: r.method, path: r.path, headers, body: r.body?.text });
  const what = `${r.method} ${r.path.slice(0, 120)} [${r.credential.label}; ${r.contentType ?? 'no content-type'}; ${r.body?.broke ?? 'no body'}]`;
  expectRefused(answer, what);
  return what;
}

/** Create routes: broken bodies with a valid key, valid bodies under a wrong content type or a wrong key. */
function createRequests(
  path: string,
  valid: fc.Arbitrary<Record<string, unknown>>,
  hostile: fc.Arbitrary<HostileBody>,
): fc.Arbitrary<Req> {
  const validBody = valid.map((v) => ({ text: toJsonText(v), broke: 'nothing (valid body)', value: v }));
  return fc.oneof(
    {
      weight: 6,
      arbitrary: hostile.map((body) => ({
        method: 'POST',
        path,
        credential: good,
        contentType: 'application/json',
        body,
      })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(validBody, wrongContentType)
        .map(([body, contentType]) => ({ method: 'POST', path, credential: good, contentType, body })),
    },
    {
      weight: 2,
      arbitrary: fc.tuple(fc.oneof(validBody, hostile), badCredential(API_KEY)).map(([body, credential]) => ({
        method: 'POST',
        path,
        credential,
        contentType: 'application/json',
        body,
      })),
    },
  );
}

/** Path-param routes: hostile segments (mostly with a valid key), or valid-shaped ids no flow has. */
function paramRequests(
  method: string,
  pathOf: (segment: string) => string,
  validShaped: fc.Arbitrary<string>,
  body?: fc.Arbitrary<HostileBody>,
): fc.Arbitrary<Req> {
  return fc
    .tuple(
      fc.oneof({ weight: 4, arbitrary: hostileSegment }, { weight: 1, arbitrary: validShaped }),
      fc.oneof({ weight: 3, arbitrary: fc.constant(good) }, { weight: 1, arbitrary: badCredential(API_KEY) }),
      body ? body.map((b): HostileBody | undefined => b) : fc.constant(undefined),
    )
    .map(([segment, credential, b]) => ({
      method,
      path: pathOf(segment),
      credential,
      ...(b ? { contentType: 'application/json', body: b } : {}),
    }));
}

const run = (arb: fc.Arbitrary<Req>, afterEach?: (r: Req, what: string) => Promise<void>) =>
  fc.assert(
    fc.asyncProperty(arb, async (r) => {
      const what = await send(r);
      if (afterEach) await afterEach(r, what);
    }),
    // No shrinking: requests have side effects, and the first counterexample is the one to see.
    { numRuns: RUNS, endOnFailure: true },
  );

const digitsId = fc.bigInt({ min: 1n, max: 10n ** 33n - 1n }).map(String);
// Shaped like a transaction id, yet naming no flow another test file of the run may have started
// (its worker gone, a query of it would find no poller): a short id such as `k` could.
const RUN_TAG = `h${Date.now().toString(36)}`;
const transactionIdShaped = fc
  .stringMatching(/^[A-Za-z0-9._-]{1,64}$/)
  .map((s) => `${RUN_TAG}${s}`.slice(0, 64));

describe('hostile input: create routes start nothing', () => {
  it(
    'POST /v1/onboardings',
    async () => {
      await run(
        createRequests(
          '/v1/onboardings',
          validOnboarding,
          hostileBody(validOnboarding, onboardingMutations, requiredFields.onboarding),
        ),
        (r, what) => h.expectNoFlows(h.idsNamedBy('onboarding', r.body?.value), what),
      );
    },
    timeoutFor(2),
  );

  it(
    'POST /v1/deposits',
    async () => {
      await run(
        createRequests(
          '/v1/deposits',
          validDeposit,
          hostileBody(validDeposit, depositMutations, requiredFields.deposit),
        ),
        (r, what) => h.expectNoFlows(h.idsNamedBy('deposit', r.body?.value), what),
      );
    },
    timeoutFor(2),
  );

  it(
    'POST /v1/withdrawals (bad pix keys per pixType included)',
    async () => {
      const pixPairs = fc.tuple(validWithdrawal, badPixPair).map(([body, pair]) => {
        const value = { ...body, ...pair };
        return { text: toJsonText(value), broke: `pix ${toJsonText(pair).slice(0, 80)}`, value };
      });
      const hostile = fc.oneof(
        {
          weight: 3,
          arbitrary: hostileBody(validWithdrawal, withdrawalMutations, requiredFields.withdrawal),
        },
        { weight: 2, arbitrary: pixPairs },
      );
      await run(createRequests('/v1/withdrawals', validWithdrawal, hostile), (r, what) =>
        h.expectNoFlows(h.idsNamedBy('withdrawal', r.body?.value), what),
      );
    },
    timeoutFor(2),
  );
});

describe('hostile input: routes with path parameters', () => {
  it(
    'GET /v1/onboardings/:cpf',
    async () => {
      await run(paramRequests('GET', (s) => `/v1/onboardings/${s}`, validCpf));
    },
    timeoutFor(),
  );

  it(
    'POST /v1/onboardings/:cpf/liveness-link',
    async () => {
      await run(paramRequests('POST', (s) => `/v1/onboardings/${s}/liveness-link`, validCpf));
    },
    timeoutFor(),
  );

  it(
    'GET /v1/biometrics/:cpf',
    async () => {
      await run(paramRequests('GET', (s) => `/v1/biometrics/${s}`, validCpf));
    },
    timeoutFor(),
  );

  it(
    'POST /v1/onboardings/:cpf/review',
    async () => {
      const body = fc.oneof(
        hostileBody(validReview, reviewMutations, requiredFields.review),
        validReview.map((v) => ({ text: toJsonText(v), broke: 'nothing (valid decision)', value: v })),
      );
      await run(paramRequests('POST', (s) => `/v1/onboardings/${s}/review`, validCpf, body));
    },
    timeoutFor(),
  );

  it(
    'GET /v1/deposits/:txid',
    async () => {
      await run(paramRequests('GET', (s) => `/v1/deposits/${s}`, digitsId));
    },
    timeoutFor(),
  );

  it(
    'GET /v1/deposits/:txid/qrcode.png',
    async () => {
      await run(paramRequests('GET', (s) => `/v1/deposits/${s}/qrcode.png`, digitsId));
    },
    timeoutFor(),
  );

  it(
    'GET /v1/withdrawals/:transactionId',
    async () => {
      await run(paramRequests('GET', (s) => `/v1/withdrawals/${s}`, transactionIdShaped));
    },
    timeoutFor(),
  );

  it(
    'GET /v1/withdrawals/:transactionId/receipt.png',
    async () => {
      await run(paramRequests('GET', (s) => `/v1/withdrawals/${s}/receipt.png`, transactionIdShaped));
    },
    timeoutFor(),
  );
});

describe('hostile input: customer routes', () => {
  // A person no flow has named: valid requests for them are 404, never a 5xx.
  const accountBody = fc.oneof(
    malformedBody,
    badPixPair.map((v) => ({ text: toJsonText(v), broke: 'key that its type refuses', value: v })),
    fc
      .record({ pixKey: anyJunk, pixType: anyJunk }, { requiredKeys: [] })
      .map((v) => ({ text: toJsonText(v), broke: 'junk fields', value: v })),
    fc.constant({ pixKey: 'ana@example.com', pixType: 'EMAIL' }).map((v) => ({
      text: toJsonText(v),
      broke: 'nothing (valid account)',
      value: v,
    })),
  );
  const accountId = fc.oneof(
    hostileSegment,
    fc.constantFrom('0', '-1', '1.5', '1e3', '99999999999999999999', 'abc'),
    fc.integer({ min: 1, max: 2 ** 31 }).map(String),
  );

  it(
    'GET /v1/customers/:cpf and /accounts',
    async () => {
      await run(
        fc.oneof(
          paramRequests('GET', (s) => `/v1/customers/${s}`, validCpf),
          paramRequests('GET', (s) => `/v1/customers/${s}/accounts`, validCpf),
        ),
      );
    },
    timeoutFor(),
  );

  it(
    'POST /v1/customers/:cpf/accounts',
    async () => {
      await run(paramRequests('POST', (s) => `/v1/customers/${s}/accounts`, validCpf, accountBody));
    },
    timeoutFor(),
  );

  it(
    'DELETE /v1/customers/:cpf/accounts/:id',
    async () => {
      const arb = fc
        .tuple(
          fc.oneof(validCpf, hostileSegment),
          accountId,
          fc.oneof(fc.constant(good), badCredential(API_KEY)),
        )
        .map(([cpf, id, credential]) => ({
          method: 'DELETE',
          path: `/v1/customers/${cpf}/accounts/${id}`,
          credential,
        }));
      await run(arb);
    },
    timeoutFor(),
  );
});

/** One query parameter that must make GET /v1/flows a 400 (raw, as it goes on the wire). */
const badFlowsParam: fc.Arbitrary<string> = (() => {
  const enc = (v: unknown) =>
    wireEncode(typeof v === 'string' ? v : (JSON.stringify(v) ?? '')).slice(0, 4_000);
  const b64 = (v: string) => Buffer.from(v).toString('base64url');
  return fc.oneof(
    fc
      .oneof(fc.constantFrom('', 'DEPOSIT', 'deposits', 'flow', 'onboarding '), unicodeText)
      .map((v) => `type=${enc(v)}`),
    fc.constant('type=deposit&type=withdrawal'),
    fc.constant('status=&type=deposit'),
    tooLong(40).map((v) => `status=${enc(v.slice(0, 400))}`),
    fc.constantFrom('%00', 'a%00b', 'completed%00', '%ED%A0%80', '%', 'a%zz').map((v) => `status=${v}`),
    fc.constant('status=a&status=b'),
    badCpf.filter((c) => typeof c === 'string').map((c) => `cpf=${enc(c)}`),
    fc
      .constantFrom(
        '2024-02-30T00:00:00Z',
        '2024-13-01T00:00:00Z',
        '2024-01-01',
        'yesterday',
        '1e3',
        '',
        '2024-01-01T00:00:00',
        '+275760-09-13T00:00:00Z',
      )
      .chain((d) => fc.constantFrom(`created_from=${enc(d)}`, `created_to=${enc(d)}`)),
    fc
      .oneof(
        fc.string({ minLength: 1, maxLength: 50 }).map((s) => enc(s)),
        fc
          .constantFrom(
            '[1,"\\u0000"]',
            '[1,"a\\u0000b"]',
            '[1.5,"x"]',
            '[1e300,"x"]',
            '["1","x"]',
            '[1]',
            '{}',
            'null',
            '[1,"\\ud800"]',
            '[9007199254740992,"x"]',
          )
          .map(b64),
        fc.integer({ min: 301, max: 2_000 }).map((n) => 'A'.repeat(n)),
      )
      .map((c) => `cursor=${c}`),
    fc
      .constantFrom('0', '101', '-1', 'abc', '1.5', '', 'Infinity', 'NaN', '1e3', '1,2')
      .map((l) => `limit=${l}`),
    fc.constant('limit=1&limit=2'),
  );
})();

const goodFlowsParam = fc.constantFrom(
  'type=deposit',
  'status=completed',
  'limit=5',
  'type=withdrawal',
  'x=1',
);

describe('hostile input: GET /v1/flows', () => {
  it(
    'bad filters, cursors and limits are 400; a wrong key is 401',
    async () => {
      const arb = fc
        .tuple(
          fc.array(goodFlowsParam, { maxLength: 2 }),
          badFlowsParam,
          fc.oneof(
            { weight: 4, arbitrary: fc.constant(good) },
            { weight: 1, arbitrary: badCredential(API_KEY) },
          ),
        )
        .map(([goods, bad, credential]) => ({
          method: 'GET',
          path: `/v1/flows?${[...goods, bad].join('&')}`,
          credential,
        }));
      await run(arb);
    },
    timeoutFor(),
  );
});

describe('hostile input: everything else', () => {
  it(
    'unknown routes and wrong methods are 4xx problem+json (401 without a key first)',
    async () => {
      const arb = fc
        .tuple(
          fc.constantFrom('PUT', 'DELETE', 'PATCH', 'POST', 'GET'),
          fc.oneof(
            fc.constantFrom(
              '/v1/onboardings',
              '/v1/deposits',
              '/v1/withdrawals',
              '/v1/flows/x',
              '/v1',
              '/v1/',
              '/v2/deposits',
              '/v1//deposits',
              '/v1/deposits/../withdrawals',
              '/v1/%2e%2e/v1/flows',
              '/webhooks/provider',
              '/webhooks',
            ),
            hostileSegment.map((s) => `/v1/${s}`),
            hostileSegment.map((s) => `/${s}`),
          ),
          fc.oneof(fc.constant(good), badCredential(API_KEY)),
        )
        .filter(([m, p]) => !(m === 'POST' && /^\/v1\/(onboardings|deposits|withdrawals)$/.test(p)))
        .filter(([m, p]) => !(m === 'GET' && p.startsWith('/v1/deposits/../')))
        .map(([method, path, credential]) => ({ method, path, credential }));
      await run(arb);
    },
    timeoutFor(),
  );

  it(
    'POST /codec/encode and /codec/decode: wrong tokens and bad payloads',
    async () => {
      const token = fc.oneof(
        {
          weight: 1,
          arbitrary: fc.constant({ header: `Bearer ${CODEC_TOKEN}`, label: 'valid codec token' }),
        },
        { weight: 2, arbitrary: fc.oneof(badCredential(CODEC_TOKEN), fc.constant(good)) },
      );
      const payloadBody = fc.oneof(
        malformedBody,
        fc
          .oneof(
            fc.record({ payloads: anyJunk.filter((v) => !(Array.isArray(v) && v.length === 0)) }),
            fc.record({
              payloads: fc.array(fc.record({ data: notAString.filter((v) => v !== null) }), {
                minLength: 1,
                maxLength: 2,
              }),
            }),
            fc.record({
              payloads: fc.array(fc.record({ metadata: fc.record({ encoding: tooLong(1_000) }) }), {
                minLength: 1,
                maxLength: 1,
              }),
            }),
          )
          .map((v) => ({ text: toJsonText(v), broke: 'payloads', value: v })),
      );
      const garbageToDecode = fc
        .record({
          payloads: fc.array(
            fc.record({
              metadata: fc.record({
                encoding: fc.constantFrom('YmluYXJ5L2VuY3J5cHRlZA==', 'anVuaw==', '', '!!'),
                'encryption-key-id': fc.constantFrom('ZGV2MQ==', 'bm9wZQ==', ''),
              }),
              data: fc.oneof(fc.base64String({ maxLength: 200 }), fc.constant('AAAA')),
            }),
            { minLength: 1, maxLength: 3 },
          ),
        })
        .map((v) => ({ text: toJsonText(v), broke: 'garbage ciphertext', value: v }));
      const arb = fc.oneof(
        fc
          .tuple(fc.constantFrom('/codec/encode', '/codec/decode'), token, payloadBody)
          .map(([path, credential, body]) => ({
            method: 'POST',
            path,
            credential,
            contentType: 'application/json',
            body,
          })),
        fc.tuple(badCredential(CODEC_TOKEN), garbageToDecode).map(([credential, body]) => ({
          method: 'POST',
          path: '/codec/decode',
          credential,
          contentType: 'application/json',
          body,
        })),
      );
      await run(arb);
    },
    timeoutFor(),
  );
});
