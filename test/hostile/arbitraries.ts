import { isValid as isValidCpf } from '@fnando/cpf';
import fc from 'fast-check';
import { pixTypeSchema, planSchema } from '../../connectors/identity-payments/wire/schemas';

// Hostile-input generators for the property tests: valid request bodies in the shapes of
// contracts/, and for every field the values that must make the request invalid.
// A request is built from a valid body with exactly one field broken (or removed), or the
// whole body replaced by something that is not the expected JSON object.

export const RUNS = Number(process.env.HOSTILE_RUNS ?? 150);

// ------------------------------------------------------------------------------ raw JSON

/** A JSON literal written as is (1e400, NaN, -0...): JSON.stringify cannot produce these. */
export class RawJson {
  constructor(readonly literal: string) {}
}

/** JSON text of a value that may hold RawJson literals anywhere. */
export function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_k, v) => {
    if (v instanceof RawJson) {
      raws.push(v.literal);
      return `@@raw${raws.length - 1}@@`;
    }
    return v;
  });
  return (text ?? 'null').replace(/"@@raw(\d+)@@"/g, (_m, i) => raws[Number(i)] ?? 'null');
}

// ------------------------------------------------------------------------------ CPFs

function checkDigits(nine: string): string {
  const digit = (s: string) => {
    let sum = 0;
    for (let i = 0; i < s.length; i++) sum += Number(s[i]) * (s.length + 1 - i);
    const r = (sum * 10) % 11;
    return r === 10 ? 0 : r;
  };
  const d1 = digit(nine);
  return `${d1}${digit(nine + d1)}`;
}

export const validCpf = fc
  .array(fc.integer({ min: 0, max: 9 }), { minLength: 9, maxLength: 9 })
  .map((d) => {
    const nine = d.join('');
    return nine + checkDigits(nine);
  })
  .filter((c) => isValidCpf(c));

const digits = (min: number, max: number) =>
  fc.array(fc.integer({ min: 0, max: 9 }), { minLength: min, maxLength: max }).map((d) => d.join(''));

// ------------------------------------------------------------------------------ generic bad values

/** Values of the wrong JSON type for a string field. */
export const notAString = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string(), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.string({ maxLength: 5 }), { maxKeys: 3 }),
);

/** Strings longer than `max` (up to ~70k characters: past the 64kb body limit too). */
export const tooLong = (max: number) =>
  fc
    .tuple(
      fc.integer({ min: max + 1, max: max + 2_000 }),
      fc.constantFrom('x', '9', 'é', '😀', '\u0000', ' '),
      fc.boolean(),
    )
    // Past `max` in UTF-16 units and in code points alike (zod counts either way).
    .map(([n, ch, huge]) => ch.repeat(huge ? n + 65_000 : n));

/** Unicode text, including lone surrogates, control characters and RTL marks. */
export const unicodeText = fc.oneof(
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
  fc.constantFrom('\u202e', '\ud800', '\udfff', '\u0000', '\ufeff', 'ㅤ', '٣', '𝟗', '\u200b'),
);

/** Text no field may carry: NUL (Postgres refuses it) and lone surrogates (not Unicode at all). */
export const illFormedText = fc
  .tuple(
    fc.string({ unit: 'grapheme-ascii', maxLength: 10 }),
    fc.constantFrom('\u0000', '\ud800', '\udfff', '\ud83d'),
    fc.string({ unit: 'grapheme-ascii', maxLength: 10 }),
  )
  .map(([a, bad, b]) => `${a}${bad}${b}`);

/** For a required string of min..max characters: every way it can be wrong. */
export const badBoundedString = (min: number, max: number) =>
  fc.oneof(notAString, tooLong(max), illFormedText, ...(min >= 1 ? [fc.constant('')] : []));

/** A value of a different type or shape (for objects and enums). */
export const anyJunk = fc.oneof(
  notAString,
  fc.string({ maxLength: 20 }),
  unicodeText,
  fc.constant(new RawJson('1e400')),
);

// ------------------------------------------------------------------------------ specific fields

export const badCpf = fc.oneof(
  // wrong check digits
  validCpf.map((c) => c.slice(0, 10) + String((Number(c[10]) + 1) % 10)),
  validCpf.map((c) => c.slice(0, 9) + String((Number(c[9]) + 3) % 10) + c[10]),
  // wrong length
  digits(0, 10),
  digits(12, 40),
  // letters, formatting, unicode digits, spaces
  validCpf.map((c) => `${c.slice(0, 5)}a${c.slice(6)}`),
  validCpf.map((c) => `${c.slice(0, 3)}.${c.slice(3, 6)}.${c.slice(6, 9)}-${c.slice(9)}`),
  validCpf.map((c) => ` ${c}`),
  validCpf.map((c) => `${c}\n`),
  fc.constantFrom('١٢٣٤٥٦٧٨٩٠٩', '１２３４５６７８９０９', '00000000000', '11111111111', '12345678909x'),
  unicodeText,
  tooLong(11),
  notAString,
  validCpf.map((c) => new RawJson(c)), // a number, not a string
);

export const MAX_CENTAVOS = 100_000_000_00;

export const badAmount = fc.oneof(
  fc.constantFrom<unknown>(0, -0, -1, MAX_CENTAVOS + 1, Number.MAX_SAFE_INTEGER, 0.5, 1.01, 99.999),
  fc.integer({ min: -1_000_000, max: 0 }),
  fc.integer({ min: MAX_CENTAVOS + 1, max: Number.MAX_SAFE_INTEGER }),
  fc.double({ min: -1e12, max: 1e12, noNaN: true }).filter((d) => !Number.isInteger(d)),
  fc.constantFrom(
    new RawJson('1e400'),
    new RawJson('-1e400'),
    new RawJson('NaN'),
    new RawJson('Infinity'),
    new RawJson('0x10'),
    new RawJson('1e-400'),
    new RawJson('12345678901234567890123'),
  ),
  fc.constantFrom('100', 'NaN', 'Infinity', '-Infinity', '1e3', '', ' 100', '100,00', '0x64'),
  fc.constant(null),
  fc.boolean(),
  fc.array(fc.integer({ min: 1, max: 100 }), { minLength: 1, maxLength: 2 }),
);

export const badTxid = fc.oneof(
  digits(34, 200),
  fc.constant(''),
  digits(1, 20).map((d) => `${d}a`),
  fc.string({ minLength: 1, maxLength: 40 }).filter((s) => !/^\d{1,33}$/.test(s)),
  fc.constantFrom('-1', '1.5', '1e3', '١٢٣', ' 123', '123 ', '0x1f', '../1', '1/2', '1%2F2'),
  unicodeText,
  notAString,
  digits(1, 15).map((d) => new RawJson(d)),
);

export const badTransactionId = fc.oneof(
  fc.constant(''),
  fc.integer({ min: 65, max: 5_000 }).map((n) => 'a'.repeat(n)),
  fc.string({ minLength: 1, maxLength: 64 }).filter((s) => !/^[A-Za-z0-9._-]+$/.test(s)),
  fc.constantFrom('a/b', 'a b', 'ação', 'a%2Fb', 'a\u0000b', '<script>', "'; DROP TABLE flows;--"),
  unicodeText.filter((s) => !/^[A-Za-z0-9._-]+$/.test(s)),
  notAString,
);

export const badEmail = fc.oneof(
  fc.constantFrom('', 'not-an-email', '@', 'a@', '@b.com', 'a b@c.com', 'a@b', 'a@@b.com', 'a@b..com'),
  fc.string({ maxLength: 30 }).filter((s) => !s.includes('@')),
  notAString,
);

/** A pix key that is wrong for the given type. */
export const badPixKeyFor = (type: string) => {
  const common = [fc.constant(''), tooLong(200), notAString];
  switch (type) {
    case 'CPF':
      return fc.oneof(badCpf, ...common);
    case 'EMAIL':
      return fc.oneof(
        badEmail,
        fc.integer({ min: 78, max: 190 }).map((n) => `${'a'.repeat(n - 12)}@example.com`),
        ...common,
      );
    case 'PHONE':
      return fc.oneof(
        fc.constantFrom('11987654321', '+5511987', '+1 555 123 4567', '+55011987654321', '+55 11 98765-4321'),
        digits(1, 20)
          .map((d) => `+55${d}`)
          .filter((p) => !/^\+55[1-9][1-9]\d{8,9}$/.test(p)),
        ...common,
      );
    case 'EVP':
      return fc.oneof(
        fc.uuid().map((u) => u.replace(/-/g, '')),
        fc.uuid().map((u) => `${u}0`),
        fc.uuid().map((u) => `{${u}}`),
        fc.constantFrom('not-a-uuid', '00000000-0000-0000-0000-00000000000g'),
        ...common,
      );
    default:
      return fc.oneof(
        fc.constantFrom(
          '12345678;0001;123456;CACC',
          'key;1234567;0001;123;CACC',
          'key;12345678;123456;123;CACC',
          'key;12345678;0001;12-3;CACC',
          'key;12345678;0001;123;XXXX',
          'key;12345678;0001;123;CACC;extra',
          ';60701190;0001;1234567;CACC',
          '!!garbage!!;60701190;0001;1234567;CACC',
          `${'k'.repeat(150)};60701190;0001;1234567;CACC`,
        ),
        ...common,
      );
  }
};

const validPixPair = fc.oneof(
  validCpf.map((k) => ({ pixKey: k, pixType: 'CPF' })),
  fc.constant({ pixKey: 'ana.souza@example.com', pixType: 'EMAIL' }),
  fc.constant({ pixKey: '+5511987654321', pixType: 'PHONE' }),
  fc.uuid().map((k) => ({ pixKey: k, pixType: 'EVP' })),
  fc.constant({ pixKey: 'ana.souza@example.com;12345678;0001;123456;CACC', pixType: 'ACCOUNT' }),
);

/** A valid key of one type sent with another type, or a key that fits its type badly. */
export const badPixPair = fc.oneof(
  fc
    .constantFrom(...pixTypeSchema.options)
    .chain((t) => badPixKeyFor(t).map((k) => ({ pixKey: k as unknown, pixType: t as unknown }))),
  fc.constant({ pixKey: 'ana.souza@example.com', pixType: 'PHONE' }),
  fc.constant({ pixKey: '+5511987654321', pixType: 'CPF' }),
  validCpf.map((k) => ({ pixKey: k, pixType: 'EVP' })),
  validPixPair.chain((p) =>
    fc
      .oneof(fc.constantFrom('cpf', 'Email', 'PIX', 'RANDOM', '', 'CNPJ', ' CPF'), notAString)
      .map((t) => ({ ...p, pixType: t as unknown })),
  ),
);

// ------------------------------------------------------------------------------ valid bodies

const safeText = (min: number, max: number) =>
  fc.string({ unit: 'grapheme-ascii', minLength: min, maxLength: max }).filter((s) => s.trim().length > 0);

const client = fc.record({
  externalId: safeText(1, 30),
  cpf: validCpf,
  email: fc.constantFrom('ana@example.com', 'joao.silva@empresa.com.br'),
  name: fc.constantFrom('Ana Souza', 'João da Silva', 'Zoë Ğüç'),
});

export const validOnboarding = fc.record(
  {
    cpf: validCpf,
    plan: fc.constantFrom(...planSchema.options),
    event: safeText(1, 100),
    redirectUrl: fc.constantFrom('/done', '/onboarding/finished?x=1'),
    userRef: safeText(1, 200),
  },
  { requiredKeys: ['cpf', 'plan', 'event'] },
);

export const validDeposit = fc.record(
  {
    txid: digits(1, 33),
    merchant: fc.constant('sandbox-merchant'),
    client,
    amountCentavos: fc.integer({ min: 1, max: MAX_CENTAVOS }),
  },
  { requiredKeys: ['client', 'amountCentavos'] },
);

export const validWithdrawal = fc
  .tuple(
    fc.record(
      {
        transactionId: fc.stringMatching(/^[A-Za-z0-9._-]{1,64}$/),
        merchant: fc.constant('sandbox-merchant'),
        client,
        amountCentavos: fc.integer({ min: 1, max: MAX_CENTAVOS }),
      },
      { requiredKeys: ['client', 'amountCentavos'] },
    ),
    validPixPair,
  )
  .map(([b, p]) => ({ ...b, ...p }));

export const validReview = fc.record({
  decision: fc.constantFrom('approve', 'refuse'),
  by: safeText(1, 200),
  reason: safeText(1, 1000),
});

// ------------------------------------------------------------------------------ mutations

/** One field (dotted path) and the values that make it wrong. */
export type FieldMutations = Record<string, fc.Arbitrary<unknown>>;

const clientMutations: FieldMutations = {
  client: anyJunk,
  'client.externalId': badBoundedString(1, 100_000),
  'client.cpf': badCpf,
  'client.email': badEmail,
  'client.name': fc.oneof(fc.constant(''), notAString, illFormedText),
  'client.phone': fc.oneof(
    notAString.filter((v) => v !== null),
    illFormedText,
  ),
  'client.birthday': fc.oneof(
    fc.constantFrom('01/02/1990', '1990-1-2', '19900102', '', 'yesterday', '1990-01-02T00:00:00Z'),
    notAString.filter((v) => v !== null),
  ),
};

export const onboardingMutations: FieldMutations = {
  cpf: badCpf,
  plan: fc.oneof(fc.constantFrom('PLAN_BASIC', 'plan_gold', '', 'plan_basic '), anyJunk),
  event: badBoundedString(1, 100),
  redirectUrl: fc.oneof(
    fc.constantFrom('//evil.example', 'https://evil.example/x', 'relative', '/a b', '/a\tb', '', '\\\\evil'),
    tooLong(500).map((s) => `/${s}`),
    notAString.filter((v) => v !== null),
  ),
  userRef: badBoundedString(1, 200).filter((v) => v !== null),
};

export const depositMutations: FieldMutations = {
  txid: badTxid.filter((v) => v !== null),
  merchant: badBoundedString(1, 100).filter((v) => v !== null),
  amountCentavos: badAmount,
  ...clientMutations,
};

export const withdrawalMutations: FieldMutations = {
  transactionId: badTransactionId.filter((v) => v !== null),
  merchant: badBoundedString(1, 100).filter((v) => v !== null),
  amountCentavos: badAmount,
  pixKey: fc.oneof(fc.constant(''), tooLong(200), notAString),
  pixType: fc.oneof(fc.constantFrom('cpf', 'PIX', '', 'CNPJ'), notAString),
  ...clientMutations,
};

export const reviewMutations: FieldMutations = {
  decision: fc.oneof(fc.constantFrom('APPROVE', 'approved', 'reject', '', 'approve '), anyJunk),
  by: badBoundedString(1, 200),
  reason: badBoundedString(1, 1000),
};

export const requiredFields = {
  onboarding: ['cpf', 'plan', 'event'],
  deposit: ['client', 'amountCentavos', 'client.cpf', 'client.email', 'client.name', 'client.externalId'],
  withdrawal: ['client', 'amountCentavos', 'pixKey', 'pixType', 'client.cpf', 'client.email', 'client.name'],
  review: ['decision', 'by', 'reason'],
};

function setPath(obj: Record<string, unknown>, path: string, value: unknown, remove = false) {
  const parts = path.split('.');
  let cur: Record<string, unknown> = obj;
  for (const p of parts.slice(0, -1)) {
    const next = cur[p];
    if (typeof next !== 'object' || next === null) return;
    cur[p] = { ...(next as Record<string, unknown>) };
    cur = cur[p] as Record<string, unknown>;
  }
  const last = parts[parts.length - 1] as string;
  if (remove) delete cur[last];
  else cur[last] = value;
}

/** What a hostile body is: its JSON text and what was broken (for failure messages). */
export interface HostileBody {
  text: string;
  broke: string;
  /** The object sent, when it is one (to find the business id it names). */
  value?: unknown;
}

/** A whole body that is not the JSON object the route expects. */
export const malformedBody: fc.Arbitrary<HostileBody> = fc
  .oneof(
    fc.constantFrom(
      '',
      '{',
      '}',
      '{"a":}',
      "{'cpf':'1'}",
      '{"a":1,}',
      '[1,2',
      'null',
      'true',
      '0',
      '"string"',
      '[]',
      '[{}]',
      '{}',
      '{"__proto__":{"polluted":1}}',
      '{"constructor":{"prototype":{"x":1}}}',
      '\ufeff{}',
      '{"a":NaN}',
      '{"a":1e400}',
      '{/*c*/}',
      'undefined',
      '\u0000',
    ),
    fc.json().filter((t) => !t.startsWith('{')),
    fc.string({ unit: 'binary', maxLength: 200 }),
    fc.integer({ min: 1, max: 40 }).map((n) => '['.repeat(n * 1000)),
    fc.integer({ min: 1, max: 40 }).map((n) => `${'{"a":'.repeat(n * 100)}1${'}'.repeat(n * 100)}`),
  )
  .map((text) => ({ text, broke: 'whole body' }));

/** A valid body with one field broken or removed, or its JSON text corrupted. */
export function hostileBody(
  valid: fc.Arbitrary<Record<string, unknown>>,
  mutations: FieldMutations,
  required: string[],
): fc.Arbitrary<HostileBody> {
  const fields = Object.keys(mutations);
  const oneField = fc.tuple(valid, fc.constantFrom(...fields)).chain(([body, field]) =>
    (mutations[field] as fc.Arbitrary<unknown>).map((bad) => {
      const copy = structuredClone(body);
      setPath(copy, field, bad);
      return {
        text: toJsonText(copy),
        broke: `${field} = ${String(toJsonText(bad)).slice(0, 80)}`,
        value: copy,
      };
    }),
  );
  const removed = fc.tuple(valid, fc.constantFrom(...required)).map(([body, field]) => {
    const copy = structuredClone(body);
    setPath(copy, field, undefined, true);
    return { text: toJsonText(copy), broke: `${field} removed`, value: copy };
  });
  const corrupted = fc
    .tuple(valid, fc.nat(), fc.constantFrom('truncate', 'trailing-comma', 'single-quotes', 'garbage-after'))
    .map(([body, n, how]) => {
      const t = JSON.stringify(body);
      const text =
        how === 'truncate'
          ? t.slice(0, n % t.length)
          : how === 'trailing-comma'
            ? `${t.slice(0, -1)},}`
            : how === 'single-quotes'
              ? t.replace(/"/g, "'")
              : `${t}}x`;
      return { text, broke: `JSON ${how}`, value: body };
    });
  return fc.oneof(
    { arbitrary: oneField, weight: 6 },
    { arbitrary: removed, weight: 1 },
    { arbitrary: corrupted, weight: 1 },
    { arbitrary: malformedBody, weight: 1 },
  );
}

// ------------------------------------------------------------------------------ credentials, headers, paths

export type Credential = { header?: string; label: string };

/** Every way to present no valid API key. */
export const badCredential = (validKey: string): fc.Arbitrary<Credential> =>
  fc.oneof(
    fc.constant({ label: 'no authorization' }),
    fc.constantFrom(
      { header: '', label: 'empty' },
      { header: 'Bearer', label: 'bare Bearer' },
      { header: 'Bearer ', label: 'Bearer and a space' },
      { header: `Basic ${Buffer.from(`${validKey}:`).toString('base64')}`, label: 'Basic' },
      { header: validKey, label: 'key without scheme' },
      { header: `Bearer ${validKey}x`, label: 'key with a suffix' },
      { header: `Bearer ${validKey.slice(0, -1)}`, label: 'truncated key' },
      { header: `Bearer ${validKey.toUpperCase()}`, label: 'upper-cased key' },
      { header: `Token ${validKey}`, label: 'wrong scheme' },
      { header: `Bearer ${validKey},another`, label: 'two keys' },
    ),
    fc
      .string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 300 })
      .filter((s) => s.trim() !== validKey && !/[\r\n]/.test(s))
      .map((s) => ({ header: `Bearer ${s}`, label: 'random key' })),
    fc
      .integer({ min: 1_000, max: 8_000 })
      .map((n) => ({ header: `Bearer ${'k'.repeat(n)}`, label: 'long key' })),
  );

/** Content types under which a JSON body is not read as JSON (or is refused). */
export const wrongContentType = fc.constantFrom<string | undefined>(
  undefined,
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/xml',
  'application/octet-stream',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/jsonx',
  'text/json',
  '',
  'garbage',
);

/** Percent-encoding that keeps lone surrogates and NUL hostile (encodeURIComponent throws on the former). */
export function wireEncode(s: string): string {
  return s
    .split(/([\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff])/)
    .map((part) => (/^[\ud800-\udfff]$/.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');
}

/**
 * Path segments that are not a valid id of any kind; already as they go on the wire. Under 4k
 * characters: past 16 KiB of request line and headers Node answers 431 itself, before the app.
 */
export const hostileSegment = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '%2e%2e',
    '%2F',
    '..%2F..%2Fetc%2Fpasswd',
    '%00',
    '%',
    '%zz',
    '%E0%A4%A',
    '%C0%AF',
    '%ED%A0%80',
    ';',
    '%3B',
    '*',
    '%22',
    ':',
    '@',
    '%20',
    '+',
    '%u002e',
    '%252F',
    '%0d%0aSet-Cookie:x=1',
  ),
  fc.integer({ min: 34, max: 4_000 }).map((n) => '9'.repeat(n)),
  fc.integer({ min: 65, max: 4_000 }).map((n) => 'a'.repeat(n)),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 60 }).map((s) => wireEncode(s)),
  illFormedText.map((s) => wireEncode(s)),
  fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 60 }).map((s) => wireEncode(s)),
  badCpf
    .filter((c) => typeof c === 'string' && c.length > 0)
    .map((c) => wireEncode(c as string).slice(0, 4_000)),
);
