import { isValid as isValidCpf } from '@fnando/cpf';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  anyJunk,
  badCpf,
  badTransactionId,
  badTxid,
  illFormedText,
  malformedBody,
  notAString,
  RUNS,
  toJsonText,
  tooLong,
  unicodeText,
  validCpf,
  wireEncode,
} from './arbitraries';
import {
  expectRefused,
  type HostileEnv,
  PARTNER_ID,
  printStats,
  rawRequest,
  startHostileEnv,
  stats,
  timeoutFor,
  WEBHOOK_SECRET,
} from './support';

// The webhook ingress of the real app under hostile notifications: each answer is 4xx
// problem+json, nothing reaches the inbox (so nothing is ever signalled), the process stays healthy.

let h: HostileEnv;
let firstInboxId = 0;

beforeAll(async () => {
  h = await startHostileEnv();
  const r = await h.e.pool.query<{ max: string | null }>('SELECT max(id)::text AS max FROM webhook_inbox');
  firstInboxId = Number(r.rows[0]?.max ?? 0);
});
afterAll(async () => {
  if (!h) return;
  await h.expectNothingOnQueue();
  await h.expectHealthy();
  printStats('ingress');
  await h.close();
});

const digits = (min: number, max: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((d) => d.join(''));

const validDeposit = digits(1, 33).map((id) => ({
  point: 'deposit',
  body: { id, type: 'deposit', action: 'updated', partner_id: PARTNER_ID } as Record<string, unknown>,
}));
const validWithdraw = fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/).map((id) => ({
  point: 'withdraw',
  body: { id, type: 'withdraw', action: 'requested', partner_id: PARTNER_ID } as Record<string, unknown>,
}));
const validLiveness = fc.tuple(validCpf, fc.uuid()).map(([cpf, tx]) => ({
  point: 'liveness',
  body: {
    transaction_id: tx,
    correlation_id: tx,
    document: cpf,
    status_verification: 'completed',
    status_onboarding: 'approved',
    action_type: 'onboarding',
    event: 'ev',
    datetime: '2026-01-01T00:00:00Z',
    partner_id: PARTNER_ID,
  } as Record<string, unknown>,
}));
const validNotification = fc.oneof(validDeposit, validWithdraw, validLiveness);

const badPartner = fc.oneof(
  fc.constantFrom(
    undefined,
    '',
    PARTNER_ID.toUpperCase(),
    `${PARTNER_ID} `,
    ` ${PARTNER_ID}`,
    `${PARTNER_ID}\u0000`,
  ),
  notAString,
  fc.string({ maxLength: 40 }).filter((s) => s !== PARTNER_ID),
  tooLong(100),
);

const badSecret = fc.oneof(
  fc.constantFrom(
    '',
    WEBHOOK_SECRET.slice(0, -1),
    `${WEBHOOK_SECRET}x`,
    WEBHOOK_SECRET.toUpperCase(),
    encodeURIComponent(`${WEBHOOK_SECRET}/`),
    '..',
    '%2e%2e',
    '%00',
    'dev-webhook-secret-change-me',
  ),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }).map(wireEncode),
  fc.integer({ min: 100, max: 3_000 }).map((n) => 's'.repeat(n)),
);

/** Per point, one field broken so that the notification can never be valid. */
const fieldBreaks: Record<string, Record<string, fc.Arbitrary<unknown>>> = {
  deposit: {
    id: badTxid,
    type: fc.oneof(fc.constantFrom('DEPOSIT', 'pix', ''), anyJunk),
    action: fc.oneof(fc.constantFrom('created', 'UPDATED', ''), anyJunk),
    partner_id: badPartner,
  },
  withdraw: {
    id: badTransactionId,
    type: fc.oneof(fc.constantFrom('WITHDRAW', 'withdrawal', ''), anyJunk),
    action: fc.oneof(fc.constantFrom('created', 'UPDATED', ''), anyJunk),
    partner_id: badPartner,
  },
  liveness: {
    // (a formatted CPF, 123.456.789-09, is tolerated by design)
    document: badCpf.filter((c) => !(typeof c === 'string' && isValidCpf(c.replace(/[.-]/g, '')))),
    // A status word pixflow does not know is taken as progress that decides nothing (and an
    // operator is told): only no word at all is refused.
    status_verification: fc.oneof(fc.constant(''), notAString, illFormedText),
    action_type: fc.oneof(fc.constantFrom('kyc', ''), anyJunk),
    transaction_id: fc.oneof(notAString, illFormedText),
    // "May be empty": null is taken.
    status_onboarding: fc.oneof(
      notAString.filter((v) => v !== null),
      illFormedText,
    ),
    datetime: fc.oneof(notAString, illFormedText),
    event: notAString,
    correlation_id: notAString,
    partner_id: badPartner,
  },
};

interface IngressReq {
  path: string;
  contentType?: string;
  text: string;
  broke: string;
}

const base = `/webhooks/provider/${WEBHOOK_SECRET}`;
const points = ['deposit', 'withdraw', 'liveness'];

const brokenField: fc.Arbitrary<IngressReq> = fc
  .tuple(validNotification, fc.boolean())
  .chain(([n, onePoint]) => {
    const breaks = fieldBreaks[n.point] as Record<string, fc.Arbitrary<unknown>>;
    return fc.constantFrom(...Object.keys(breaks)).chain((field) =>
      (breaks[field] as fc.Arbitrary<unknown>).map((bad) => {
        const body = { ...n.body };
        if (bad === undefined) delete body[field];
        else body[field] = bad;
        return {
          path: onePoint ? base : `${base}/${n.point}`,
          contentType: 'application/json',
          text: toJsonText(body),
          broke: `${n.point}.${field} = ${toJsonText(bad ?? '(removed)').slice(0, 60)}`,
        };
      }),
    );
  });

/** Fields a provider may leave out ("may be empty"): taking a body without one is right. */
const OPTIONAL_FIELDS = new Set(['status_onboarding']);

const removedField: fc.Arbitrary<IngressReq> = validNotification.chain((n) =>
  fc.constantFrom(...Object.keys(n.body).filter((f) => !OPTIONAL_FIELDS.has(f))).map((field) => {
    const body = { ...n.body };
    delete body[field];
    return {
      path: `${base}/${n.point}`,
      contentType: 'application/json',
      text: toJsonText(body),
      broke: `${field} removed`,
    };
  }),
);

/** A valid notification sent to the wrong place: a bad secret, an unknown point, another point's URL. */
const wrongPlace: fc.Arbitrary<IngressReq> = fc.tuple(validNotification, fc.nat()).chain(([n, i]) =>
  fc
    .oneof(
      badSecret.map((s) => ({ path: `/webhooks/provider/${s}/${n.point}`, broke: 'bad secret' })),
      badSecret.map((s) => ({ path: `/webhooks/provider/${s}`, broke: 'bad secret' })),
      fc
        .oneof(
          fc.constantFrom(
            'DEPOSIT',
            'withdrawal',
            'kyc',
            '..',
            '%2e%2e',
            '%2F',
            '%00',
            'deposit%2F..',
            '%ED%A0%80',
          ),
          unicodeText.map(wireEncode),
          fc.integer({ min: 50, max: 3_000 }).map((k) => 'p'.repeat(k)),
        )
        .map((p) => ({ path: `${base}/${p}`, broke: 'unknown point' })),
      fc.constant({
        path: `${base}/${points.filter((p) => p !== n.point)[i % 2]}`,
        broke: 'another point',
      }),
    )
    .map((w) => ({ ...w, contentType: 'application/json', text: toJsonText(n.body) })),
);

const whollyBad: fc.Arbitrary<IngressReq> = fc
  .tuple(
    fc.oneof(
      malformedBody,
      fc
        .record({ partner_id: fc.constant(PARTNER_ID), type: fc.constantFrom('other', 'liveness', 'x') })
        .map((v) => ({ text: toJsonText(v), broke: 'unknown notification' })),
      // Oversized: past the ingress's 16 KiB limit.
      validNotification.chain((n) =>
        fc.integer({ min: 16_500, max: 100_000 }).map((k) => ({
          text: toJsonText({ ...n.body, padding: 'x'.repeat(k) }),
          broke: `oversized (${k})`,
        })),
      ),
    ),
    fc.constantFrom(
      undefined,
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/octet-stream',
      'garbage',
    ),
    fc.constantFrom('', '/deposit', '/withdraw', '/liveness'),
  )
  .map(([b, contentType, p]) => ({ path: `${base}${p}`, contentType, text: b.text, broke: b.broke }));

describe('hostile input: webhook ingress', () => {
  it(
    'POST /webhooks/provider/:secret[/:point]: every hostile notification is 4xx and nothing is stored or signalled',
    async () => {
      const arb = fc.oneof(
        { weight: 4, arbitrary: brokenField },
        { weight: 1, arbitrary: removedField },
        { weight: 2, arbitrary: wrongPlace },
        { weight: 2, arbitrary: whollyBad },
      );
      await fc.assert(
        fc.asyncProperty(arb, async (r) => {
          const headers: Record<string, string> = {};
          if (r.contentType !== undefined) headers['content-type'] = r.contentType;
          const a = await rawRequest(h.e.url, { method: 'POST', path: r.path, headers, body: r.text });
          const what = `POST ${r.path.replace(WEBHOOK_SECRET, '<secret>').slice(0, 100)} [${r.contentType}; ${r.broke}]`;
          expectRefused(a, what);
          // The secret never comes back in an answer.
          expect(a.text.includes(WEBHOOK_SECRET), what).toBe(false);
          const stored = await h.e.pool.query(
            'SELECT id FROM webhook_inbox WHERE id > $1 AND raw_body = $2',
            [firstInboxId, r.text.includes('\u0000') ? '' : r.text],
          );
          if ((stored.rowCount ?? 0) > 0) stats.signals++;
          expect(stored.rowCount, `${what}: stored in the inbox`).toBe(0);
        }),
        { numRuns: RUNS * 2, endOnFailure: true },
      );
    },
    timeoutFor(4),
  );
});
