// One file over 400 lines on purpose: the probes run in order on one context, each using what
// the ones before it found (the token, the auth form the provider takes), and their findings are
// told in that order.

import { randomBytes, randomInt } from 'node:crypto';
import { z } from 'zod';
import { maskCpfsIn } from '../../common/mask';
import { decimalTextToCentavos } from '../../common/money';
import { kycRegistryStatuses } from '../../contracts/reasons';
import { normaliseWord, standingOf } from '../status-words';
import { OPEN_POINT_IDS, type OpenPointId } from './open-points';
import type { ProviderClientOptions } from './transport';

// `npm run conformance`: which side of every open point (./open-points.ts) a real provider takes,
// seen on the wire with plain fetch, so each answer is observed as the provider gives it and not
// as pixflow's client would read it. Read-only and smallest-value: KYC of a test document, one
// liveness request, look-ups of ids that do not exist, one deposit of R$ 0,01 whose QR code is
// never paid, refused requests. Nothing here sends a payout.

/** The provider to probe: the same settings the connector is built with. */
export type ProviderTarget = Pick<
  ProviderClientOptions,
  'baseUrl' | 'authUrl' | 'clientId' | 'clientSecret' | 'apiKey' | 'merchant' | 'timeoutMs'
>;

export interface ConformanceOptions {
  /** The CPF the KYC, liveness and deposit probes use: a test document of the provider's sandbox. */
  document: string;
  /** The settings the operator already gave pixflow, checked against what the provider takes. */
  given?: {
    PROVIDER_AUTH_HEADER?: AuthHeaderSetting;
    PROVIDER_RECEIPT_FORMAT?: ReceiptFormatSetting;
    PROVIDER_LIVENESS_ID_FIELD?: LivenessIdFieldSetting;
  };
}

/** A side of a point, or why there is none: what `npm run conformance` prints for it. */
export type Finding =
  | { side: 'doc' | 'other' | 'both accepted'; observed: string }
  | { side: 'not probed'; why: string }
  | { side: 'neither'; observed: string };

/** Something that would stop a flow (`ok: false`), or a step that worked. */
export interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/** PROVIDER_AUTH_HEADER's values (connectors/identity-payments/transport.ts reads them). */
export const AUTH_HEADER_SETTINGS = ['auto', 'bare', 'bearer'] as const;
export type AuthHeaderSetting = (typeof AUTH_HEADER_SETTINGS)[number];
/** PROVIDER_RECEIPT_FORMAT's values. */
export const RECEIPT_FORMAT_SETTINGS = ['auto', 'json', 'form'] as const;
export type ReceiptFormatSetting = (typeof RECEIPT_FORMAT_SETTINGS)[number];

/** PROVIDER_LIVENESS_ID_FIELD's values. */
export type LivenessIdFieldSetting = 'auto' | 'correlation_id' | 'correlationId';

export interface ConformanceReport {
  baseUrl: string;
  authUrl: string;
  points: Record<OpenPointId, Finding>;
  checks: Check[];
  /** The settings pixflow will use against this provider; absent when no answer tells. */
  settings: {
    PROVIDER_AUTH_HEADER?: AuthHeaderSetting;
    PROVIDER_RECEIPT_FORMAT?: ReceiptFormatSetting;
    PROVIDER_LIVENESS_ID_FIELD?: LivenessIdFieldSetting;
  };
  /** The smallest-value deposit the run created (never paid). */
  depositTxid?: string;
  ok: boolean;
}

// ---------------------------------------------------------------- one exchange, never throwing

interface Answer {
  /** 0 when no answer came back. */
  status: number;
  text: string;
  json: unknown;
  /** Why no answer came back. */
  error?: string;
}

type Send = { json: unknown } | { form: Record<string, string> } | undefined;

async function exchange(
  target: ProviderTarget,
  method: 'GET' | 'POST',
  url: string,
  headers: Record<string, string>,
  send: Send,
): Promise<Answer> {
  const body =
    send === undefined
      ? undefined
      : 'json' in send
        ? JSON.stringify(send.json)
        : new URLSearchParams(send.form).toString();
  const contentType =
    send === undefined
      ? {}
      : { 'content-type': 'json' in send ? 'application/json' : 'application/x-www-form-urlencoded' };
  try {
    const res = await fetch(url, {
      method,
      headers: { accept: 'application/json', ...contentType, ...headers },
      body,
      signal: AbortSignal.timeout(target.timeoutMs),
    });
    const text = await res.text();
    let json: unknown;
    try {
      json = text === '' ? undefined : JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { status: res.status, text, json };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string; errors?: { code?: string }[] } })
      .cause;
    const why =
      (err as Error).name === 'TimeoutError'
        ? `no answer within ${target.timeoutMs} ms`
        : (cause?.code ?? cause?.errors?.[0]?.code ?? cause?.message ?? (err as Error).message);
    return { status: 0, text: '', json: undefined, error: why };
  }
}

const SECRET_FIELDS = /token|secret|password|api.?key|pixImage|qrcode|invoice/i;

/** An answer as a short line: its status and body, secrets and images left out, CPFs masked. */
export function describeAnswer(a: Answer): string {
  if (a.status === 0) return `no answer (${a.error ?? 'unknown'})`;
  let body: string;
  if (a.json !== undefined) {
    body = JSON.stringify(a.json, (key, value: unknown) =>
      key !== '' && SECRET_FIELDS.test(key) && typeof value === 'string' && value !== ''
        ? '(not shown)'
        : value,
    );
  } else {
    body = a.text === '' ? '(empty body)' : `(not JSON) ${a.text.replace(/\s+/g, ' ')}`;
  }
  const short = body.length > 160 ? `${body.slice(0, 157)}...` : body;
  return `${a.status} ${maskCpfsIn(short)}`;
}

const accepted = (a: Answer) => a.status !== 0 && a.status !== 401 && a.status !== 403;
const ok2xx = (a: Answer) => a.status >= 200 && a.status < 300;
const show = (v: unknown) => (v === undefined ? 'absent' : JSON.stringify(v));

// ---------------------------------------------------------------- what the probes read

const tokenAnswerSchema = z.looseObject({
  access_token: z.string().min(1),
  expires_in: z.unknown(),
  token_type: z.unknown(),
});

const kycAnswerSchema = z.looseObject({ status: z.string().nullable() });

const livenessAnswerSchema = z.looseObject({
  transaction_id: z.string().min(1),
  action: z.looseObject({ url: z.string().min(1) }),
});

const depositCreatedSchema = z.looseObject({
  pixPayload: z.string().min(1),
  expiry: z.string().min(1),
});

const nullableText = z.string().nullable().optional();
const inquirySchema = z.looseObject({
  txid: z.string(),
  status: z.string().min(1),
  value: z.union([z.number(), z.string()]),
  name_payer: nullableText,
  cpf_payer: nullableText,
  payedAt: nullableText,
  paidAt: nullableText,
});
type InquiryAnswer = z.infer<typeof inquirySchema>;

const receiptSchema = z.looseObject({
  status: z.union([z.number(), z.string()]).nullable(),
  invoice: nullableText,
  datetimepayed: nullableText,
});
type ReceiptAnswer = z.infer<typeof receiptSchema>;

/** An error body pixflow can read: a message or an error code, as every documented shape has. */
const errorBodySchema = z
  .looseObject({
    message: z.union([z.string(), z.array(z.string())]).optional(),
    error: z.string().optional(),
  })
  .refine((b) => b.message !== undefined || b.error !== undefined, 'neither message nor error');

/** A `value` in centavos, from a number or its decimal text. */
function centavosOf(value: number | string): number | null {
  return decimalTextToCentavos(typeof value === 'number' ? String(value) : value.trim());
}

// ---------------------------------------------------------------- status words (inquiry.status)

/**
 * The words of each side as the sandbox writes them, to tell the side; where a word stands
 * (pending, settled, failed) comes from pixflow's one table of status words, as the connector
 * reads it.
 */
const SIDE_WORDS: Record<string, 'doc' | 'other'> = {
  processing: 'doc',
  completed: 'doc',
  failed: 'doc',
  expired: 'doc',
  ATIVA: 'other',
  CONCLUIDA: 'other',
  REJEITADA: 'other',
  EXPIRADA: 'other',
};

export interface ProbeContext {
  target: ProviderTarget;
  options: ConformanceOptions;
  points: Partial<Record<OpenPointId, Finding>>;
  checks: Check[];
  settings: ConformanceReport['settings'];
}

const url = (base: string, path: string) => `${base.replace(/\/+$/, '')}${path}`;

function check(ctx: ProbeContext, name: string, ok: boolean, detail: string): boolean {
  ctx.checks.push({ name, ok, detail });
  return ok;
}

// ---------------------------------------------------------------- token

async function requestToken(ctx: ProbeContext, clientSecret: string): Promise<Answer> {
  const { target } = ctx;
  return exchange(
    target,
    'POST',
    url(target.authUrl, '/oauth2/token'),
    {},
    {
      form: { client_id: target.clientId, client_secret: clientSecret, grant_type: 'client_credentials' },
    },
  );
}

/** The token, and `token.expires_in`; undefined when the provider refuses the credentials. */
async function probeToken(ctx: ProbeContext): Promise<string | undefined> {
  const answer = await requestToken(ctx, ctx.target.clientSecret);
  const parsed = tokenAnswerSchema.safeParse(answer.json);
  if (!ok2xx(answer) || !parsed.success) {
    check(ctx, 'token', false, `the token request was refused or unreadable: ${describeAnswer(answer)}`);
    ctx.points['token.expires_in'] = { side: 'not probed', why: 'no token was issued' };
    return undefined;
  }
  const { expires_in: expiresIn, token_type: tokenType } = parsed.data;
  const type = `token_type ${show(tokenType)}`;
  if (typeof expiresIn === 'number' && Number.isInteger(expiresIn) && expiresIn > 0) {
    ctx.points['token.expires_in'] = {
      side: 'doc',
      observed: `expires_in ${expiresIn}, a JSON number; ${type}`,
    };
  } else if (typeof expiresIn === 'string' && /^\d+$/.test(expiresIn) && Number(expiresIn) > 0) {
    ctx.points['token.expires_in'] = {
      side: 'other',
      observed: `expires_in "${expiresIn}", a string; ${type}`,
    };
  } else {
    ctx.points['token.expires_in'] = { side: 'neither', observed: `expires_in ${show(expiresIn)}; ${type}` };
    check(ctx, 'token lifetime', false, `expires_in ${show(expiresIn)} is not a number of seconds`);
  }
  check(ctx, 'token', true, `issued, lifetime ${String(expiresIn)} s`);
  return parsed.data.access_token;
}

/** `token.errors`: a wrong client_secret (read-only; the rate limit is not tripped on purpose). */
async function probeTokenErrors(ctx: ProbeContext): Promise<void> {
  // Nothing like the real secret: a provider may log what it refuses.
  const wrong = `pixflow-conformance-wrong-${randomBytes(12).toString('hex')}`;
  const answer = await requestToken(ctx, wrong);
  const said = `a wrong client_secret: ${describeAnswer(answer)}; the rate limit not probed (it would trip it)`;
  const errorCode = z.looseObject({ error: z.string() }).safeParse(answer.json);
  if (answer.status === 401) ctx.points['token.errors'] = { side: 'doc', observed: said };
  else if (answer.status === 400 && errorCode.success && errorCode.data.error === 'invalid_client')
    ctx.points['token.errors'] = { side: 'other', observed: said };
  else ctx.points['token.errors'] = { side: 'neither', observed: said };
  if (ok2xx(answer))
    check(ctx, 'bad credentials refused', false, `a wrong client_secret got a token: ${said}`);
}

// ---------------------------------------------------------------- auth header, KYC, liveness

type Form = 'bare' | 'bearer';
const authorization = (token: string, form: Form) => ({
  authorization: form === 'bare' ? token : `Bearer ${token}`,
});

interface AuthSeen {
  kyc: Record<Form, Answer>;
  inquiry: Record<Form, Answer>;
}

async function probeAuthForms(ctx: ProbeContext, token: string): Promise<AuthSeen> {
  const { target, options } = ctx;
  const kyc = (form: Form) =>
    exchange(target, 'POST', url(target.baseUrl, `/kyc/${options.document}`), authorization(token, form), {
      json: { plan: 'plan_basic' },
    });
  const unknownTxid = digitsTxid();
  const inquiry = (form: Form) =>
    exchange(
      target,
      'GET',
      url(target.baseUrl, `/dataconnector/transaction/${unknownTxid}/type/deposit`),
      authorization(token, form),
      undefined,
    );
  // The document's order: KYC bare then Bearer, inquiry Bearer then bare.
  const kycBare = await kyc('bare');
  const kycBearer = await kyc('bearer');
  const inquiryBearer = await inquiry('bearer');
  const inquiryBare = await inquiry('bare');
  return { kyc: { bare: kycBare, bearer: kycBearer }, inquiry: { bare: inquiryBare, bearer: inquiryBearer } };
}

const formsTaken = (seen: Record<Form, Answer>): Form[] =>
  (['bare', 'bearer'] as const).filter((f) => accepted(seen[f]));

interface FormsTaken {
  /** What KYC and liveness are sent with. */
  kyc: Form;
  /** What inquiries are sent with. */
  inquiry: Form;
}

const formWord = (f: Form) => (f === 'bare' ? 'bare' : 'Bearer');
const formsWord = (forms: Form[]) => (forms.length ? forms.map(formWord).join(' and ') : 'neither form');
const statusWord = (a: Answer) => (a.status === 0 ? 'no answer' : String(a.status));

/**
 * PROVIDER_AUTH_HEADER as the transport reads it: `bare` or `bearer` is that form on every
 * endpoint, `auto` the document's form per endpoint and the other once on a refusal. A fixed
 * form when one is taken everywhere (Bearer when both are), else `auto`.
 */
function authSettings(kyc: Form[], inquiry: Form[]): { works: AuthHeaderSetting[]; use?: AuthHeaderSetting } {
  const works: AuthHeaderSetting[] = (['bare', 'bearer'] as const).filter(
    (f) => kyc.includes(f) && inquiry.includes(f),
  );
  if (kyc.length > 0 && inquiry.length > 0) works.push('auto');
  const use = works.includes('bearer') ? 'bearer' : works[0];
  return { works, ...(use ? { use } : {}) };
}

/** A setting the operator gave that this provider would refuse: a check that fails. */
function checkGivenSetting(
  ctx: ProbeContext,
  name: string,
  given: string | undefined,
  works: string[],
): void {
  // With nothing taken, the check of the step itself fails already.
  if (given === undefined || works.length === 0 || works.includes(given)) return;
  const instead = works.length ? `; it takes ${works.join(' or ')}` : '';
  check(ctx, name, false, `${name}=${given}, as set, would be refused by this provider${instead}`);
}

/** `auth.header` and PROVIDER_AUTH_HEADER; the forms to go on with, undefined when KYC takes none. */
function judgeAuthForms(ctx: ProbeContext, seen: AuthSeen): FormsTaken | undefined {
  const kyc = formsTaken(seen.kyc);
  const inquiry = formsTaken(seen.inquiry);
  const observed =
    `KYC takes ${formsWord(kyc)} (bare ${statusWord(seen.kyc.bare)}, Bearer ${statusWord(seen.kyc.bearer)}); ` +
    `inquiries take ${formsWord(inquiry)} (Bearer ${statusWord(seen.inquiry.bearer)}, bare ${statusWord(seen.inquiry.bare)})`;
  const is = (forms: Form[], ...want: Form[]) =>
    forms.length === want.length && want.every((f) => forms.includes(f));
  let side: 'doc' | 'other' | 'both accepted' | 'neither' = 'neither';
  if (is(kyc, 'bare') && is(inquiry, 'bearer')) side = 'doc';
  else if (is(kyc, 'bearer') && is(inquiry, 'bearer')) side = 'other';
  else if (is(kyc, 'bare', 'bearer') && is(inquiry, 'bare', 'bearer')) side = 'both accepted';
  ctx.points['auth.header'] = { side, observed };
  const refused = (answers: Record<Form, Answer>) =>
    `bare: ${describeAnswer(answers.bare)}; Bearer: ${describeAnswer(answers.bearer)}`;
  const kycOk = check(
    ctx,
    'KYC and liveness authorization',
    kyc.length > 0,
    kyc.length > 0 ? `${formsWord(kyc)} accepted` : refused(seen.kyc),
  );
  const inquiryOk = check(
    ctx,
    'inquiry authorization',
    inquiry.length > 0,
    inquiry.length > 0
      ? `${formsWord(inquiry)} accepted (an unknown txid answered ${statusWord(seen.inquiry[inquiry[0] as Form])})`
      : refused(seen.inquiry),
  );
  const settings = authSettings(kyc, inquiry);
  if (settings.use) ctx.settings.PROVIDER_AUTH_HEADER = settings.use;
  checkGivenSetting(ctx, 'PROVIDER_AUTH_HEADER', ctx.options.given?.PROVIDER_AUTH_HEADER, settings.works);
  if (!kycOk) return undefined;
  // The document's form first, as `auto` sends it.
  const first = (forms: Form[], documented: Form): Form =>
    forms.includes(documented) ? documented : (forms[0] ?? documented);
  return { kyc: first(kyc, 'bare'), inquiry: inquiryOk ? first(inquiry, 'bearer') : 'bearer' };
}

/** `kyc.status`: the letter case of the test document's registry status. */
function judgeKycStatus(ctx: ProbeContext, answer: Answer): void {
  const parsed = kycAnswerSchema.safeParse(answer.json);
  if (!ok2xx(answer) || !parsed.success) {
    ctx.points['kyc.status'] = { side: 'neither', observed: describeAnswer(answer) };
    check(
      ctx,
      'KYC',
      false,
      `the KYC of the test document was refused or unreadable: ${describeAnswer(answer)}`,
    );
    return;
  }
  const status = parsed.data.status;
  if (status === null) {
    ctx.points['kyc.status'] = {
      side: 'not probed',
      why: 'the document has no registry status (null); give --kyc-document a regular one',
    };
    return;
  }
  const known: readonly string[] = kycRegistryStatuses;
  const observed = `the test document's status is "${status}"`;
  if (!known.includes(normaliseWord(status))) {
    ctx.points['kyc.status'] = { side: 'neither', observed };
    check(ctx, 'KYC status', false, `status "${status}" is not a registry status pixflow knows`);
    return;
  }
  // pixflow reads the word in any letter case; the side is the case it is written in.
  const side =
    status === status.toLowerCase() ? 'doc' : status === status.toUpperCase() ? 'other' : 'neither';
  ctx.points['kyc.status'] = { side, observed };
  check(ctx, 'KYC', true, observed);
}

/** `liveness.correlation`: correlation_id, and correlationId only when the first is refused naming it. */
async function probeLiveness(ctx: ProbeContext, token: string, form: Form): Promise<void> {
  const { target, options } = ctx;
  const send = (field: 'correlation_id' | 'correlationId') =>
    exchange(
      target,
      'POST',
      url(target.baseUrl, `/kyc-liveness/${options.document}`),
      authorization(token, form),
      {
        json: {
          [field]: `pixflow-conformance-${randomBytes(8).toString('hex')}`,
          plan: 'plan_basic',
          event: 'onboarding',
        },
      },
    );
  const first = await send('correlation_id');
  const started = (a: Answer) => ok2xx(a) && livenessAnswerSchema.safeParse(a.json).success;
  if (started(first)) {
    ctx.points['liveness.correlation'] = {
      side: 'doc',
      observed: `correlation_id accepted (${first.status})`,
    };
    check(ctx, 'liveness', true, `started with correlation_id (${first.status})`);
    ctx.settings.PROVIDER_LIVENESS_ID_FIELD = 'correlation_id';
    checkGivenSetting(ctx, 'PROVIDER_LIVENESS_ID_FIELD', options.given?.PROVIDER_LIVENESS_ID_FIELD, [
      'auto',
      'correlation_id',
    ]);
    return;
  }
  if (first.status === 400 && /correlationId/.test(first.text)) {
    const second = await send('correlationId');
    if (started(second)) {
      ctx.points['liveness.correlation'] = {
        side: 'other',
        observed: `correlation_id refused (${describeAnswer(first)}); correlationId accepted (${second.status})`,
      };
      check(ctx, 'liveness', true, `started with correlationId (${second.status})`);
      ctx.settings.PROVIDER_LIVENESS_ID_FIELD = 'correlationId';
      checkGivenSetting(ctx, 'PROVIDER_LIVENESS_ID_FIELD', options.given?.PROVIDER_LIVENESS_ID_FIELD, [
        'auto',
        'correlationId',
      ]);
      return;
    }
    ctx.points['liveness.correlation'] = {
      side: 'neither',
      observed: `correlationId: ${describeAnswer(second)}`,
    };
    check(ctx, 'liveness', false, `refused with either spelling: ${describeAnswer(second)}`);
    return;
  }
  ctx.points['liveness.correlation'] = {
    side: 'neither',
    observed: `correlation_id: ${describeAnswer(first)}`,
  };
  check(ctx, 'liveness', false, `refused or unreadable: ${describeAnswer(first)}`);
}

// ---------------------------------------------------------------- deposit and its inquiry

/** Digits only, at most 33: the provider's rule for a deposit txid. */
function digitsTxid(): string {
  return `${Date.now()}${String(randomInt(0, 1e9)).padStart(9, '0')}`;
}

const apiKeyHeader = (target: ProviderTarget) => ({ 'x-service-api-key': `Api-Key ${target.apiKey}` });

/** One deposit of R$ 0,01 (never paid); its txid when the provider created it readably. */
async function probeDeposit(ctx: ProbeContext): Promise<string | undefined> {
  const { target, options } = ctx;
  const txid = digitsTxid();
  const answer = await exchange(
    target,
    'POST',
    url(target.baseUrl, '/v2/deposit/create'),
    apiKeyHeader(target),
    {
      json: {
        merchant: target.merchant,
        client: {
          externalId: 'pixflow-conformance',
          cpf: options.document,
          email: 'conformance@pixflow.invalid',
          name: 'Pixflow Conformance',
        },
        value: 0.01,
        txid,
      },
    },
  );
  const parsed = depositCreatedSchema.safeParse(answer.json);
  if (!ok2xx(answer) || !parsed.success) {
    check(
      ctx,
      'deposit create',
      false,
      `a R$ 0,01 deposit was refused or unreadable: ${describeAnswer(answer)}`,
    );
    return undefined;
  }
  check(ctx, 'deposit create', true, `R$ 0,01 QR code created (${answer.status}), txid ${txid}, never paid`);
  return txid;
}

/** The created deposit's inquiry, asked again for a few seconds while the provider does not know it yet. */
async function inquireDeposit(ctx: ProbeContext, token: string, form: Form, txid: string): Promise<Answer> {
  const { target } = ctx;
  let answer: Answer = { status: 0, text: '', json: undefined };
  for (let attempt = 0; attempt < 5; attempt += 1) {
    if (attempt > 0) await new Promise((r) => setTimeout(r, 1000));
    answer = await exchange(
      target,
      'GET',
      url(target.baseUrl, `/dataconnector/transaction/${txid}/type/deposit`),
      authorization(token, form),
      undefined,
    );
    if (answer.status !== 404) break;
  }
  return answer;
}

function judgeInquiryStatus(ctx: ProbeContext, record: InquiryAnswer): void {
  const word = record.status;
  const side = SIDE_WORDS[word];
  const standing = standingOf(word);
  const observed = `a deposit nobody paid shows "${word}"${standing ? ` (${standing})` : ''}`;
  if (standing === undefined) {
    ctx.points['inquiry.status'] = { side: 'neither', observed };
    check(ctx, 'inquiry status', false, `status "${word}" is not a word pixflow understands`);
  } else if (standing !== 'pending') {
    ctx.points['inquiry.status'] = { side: 'neither', observed };
    check(ctx, 'inquiry status', false, `a deposit nobody paid reads as ${standing}`);
  } else {
    ctx.points['inquiry.status'] = { side: side ?? 'neither', observed };
    check(ctx, 'inquiry status', true, observed);
  }
}

type Lean = 'doc' | 'other' | 'unseen' | 'neither';

/** One finding from several fields' leanings: one side when every field seen leans to it. */
function combine(leans: Lean[], observed: string): Finding {
  const seen = leans.filter((l) => l !== 'unseen');
  if (seen.length > 0 && seen.every((l) => l === 'doc')) return { side: 'doc', observed };
  if (seen.length > 0 && seen.every((l) => l === 'other')) return { side: 'other', observed };
  return { side: 'neither', observed };
}

const emptyLean = (v: string | null | undefined): Lean =>
  v === undefined ? 'unseen' : v === null ? 'other' : v === '' ? 'doc' : 'unseen';

function judgeInquiryEmpty(ctx: ProbeContext, record: InquiryAnswer): void {
  const time = 'payedAt' in record ? 'payedAt' : 'paidAt' in record ? 'paidAt' : undefined;
  const leans: Lean[] = [
    emptyLean(record.name_payer),
    emptyLean(record.cpf_payer),
    time === 'payedAt' ? 'doc' : time === 'paidAt' ? 'other' : 'unseen',
    typeof record.value === 'number' ? 'doc' : 'other',
  ];
  const observed =
    `name_payer ${show(record.name_payer)}, cpf_payer ${show(record.cpf_payer)}, ` +
    `${time ? `${time} ${show(record[time])}` : 'no payedAt or paidAt'}, value ${JSON.stringify(record.value)}`;
  ctx.points['inquiry.empty'] = combine(leans, observed);
  const centavos = centavosOf(record.value);
  check(
    ctx,
    'inquiry value',
    centavos === 1,
    `value ${JSON.stringify(record.value)}${centavos === 1 ? ' is R$ 0,01' : ', not R$ 0,01'}`,
  );
}

async function probeInquiry(
  ctx: ProbeContext,
  token: string | undefined,
  form: Form,
  txid: string | undefined,
): Promise<void> {
  const why = !token ? 'no token was issued' : !txid ? 'no deposit was created' : undefined;
  if (!token || !txid) {
    ctx.points['inquiry.status'] = { side: 'not probed', why: why ?? '' };
    ctx.points['inquiry.empty'] = { side: 'not probed', why: why ?? '' };
    return;
  }
  const answer = await inquireDeposit(ctx, token, form, txid);
  const parsed = inquirySchema.safeParse(answer.json);
  if (!ok2xx(answer) || !parsed.success || parsed.data.txid !== txid) {
    const observed = describeAnswer(answer);
    ctx.points['inquiry.status'] = { side: 'neither', observed };
    ctx.points['inquiry.empty'] = { side: 'neither', observed };
    check(
      ctx,
      'inquiry of the deposit',
      false,
      `the created deposit's inquiry failed or is unreadable: ${observed}`,
    );
    return;
  }
  check(ctx, 'inquiry of the deposit', true, `found (${answer.status})`);
  judgeInquiryStatus(ctx, parsed.data);
  judgeInquiryEmpty(ctx, parsed.data);
}

// ---------------------------------------------------------------- receipts

async function probeReceipts(ctx: ProbeContext): Promise<void> {
  const { target } = ctx;
  const fields = {
    merchant: target.merchant,
    transactionId: `pixflow-conformance-${randomBytes(8).toString('hex')}`,
  };
  const at = url(target.baseUrl, '/receipts/merchant/cash-out/generate');
  const json = await exchange(target, 'POST', at, apiKeyHeader(target), { json: fields });
  const form = await exchange(target, 'POST', at, apiKeyHeader(target), { form: fields });
  const readable = (a: Answer) => (ok2xx(a) ? receiptSchema.safeParse(a.json) : undefined);
  const [jsonRead, formRead] = [readable(json), readable(form)];
  const observed = `JSON ${json.status || 'no answer'}, form ${form.status || 'no answer'}`;
  const takesJson = jsonRead?.success === true;
  const takesForm = formRead?.success === true;
  const side = takesJson && takesForm ? 'both accepted' : takesJson ? 'doc' : takesForm ? 'other' : undefined;
  ctx.points['receipt.content-type'] = side
    ? { side, observed }
    : { side: 'neither', observed: `JSON ${describeAnswer(json)}; form ${describeAnswer(form)}` };
  // `auto` sends JSON, then a form once when the content type is refused (a 415, or a 400 saying so).
  const contentTypeRefused =
    json.status === 415 ||
    (json.status === 400 && /content[\s-]?type|media[\s-]?type|urlencoded|json/i.test(json.text));
  const works: ReceiptFormatSetting[] = [
    ...(takesJson ? (['json'] as const) : []),
    ...(takesForm ? (['form'] as const) : []),
    ...(takesJson || (takesForm && contentTypeRefused) ? (['auto'] as const) : []),
  ];
  checkGivenSetting(ctx, 'PROVIDER_RECEIPT_FORMAT', ctx.options.given?.PROVIDER_RECEIPT_FORMAT, works);
  const read = jsonRead?.success ? jsonRead.data : formRead?.success ? formRead.data : undefined;
  if (!read) {
    check(ctx, 'receipt', false, `no format gave a readable receipt: ${observed}`);
    ctx.points['receipt.status'] = { side: 'not probed', why: 'no receipt answer was readable' };
    return;
  }
  check(ctx, 'receipt', true, `${observed}: readable`);
  ctx.settings.PROVIDER_RECEIPT_FORMAT = takesJson ? 'json' : 'form';
  judgeReceiptStatus(ctx, read);
}

function judgeReceiptStatus(ctx: ProbeContext, receipt: ReceiptAnswer): void {
  const { status } = receipt;
  const statusLean: Lean =
    typeof status === 'number' ? 'doc' : status === null ? 'other' : status === '' ? 'doc' : 'other';
  const observed = `an unknown transaction: status ${show(status)}, invoice ${show(receipt.invoice)}, datetimepayed ${show(receipt.datetimepayed)}`;
  ctx.points['receipt.status'] = combine(
    [statusLean, emptyLean(receipt.invoice), emptyLean(receipt.datetimepayed)],
    observed,
  );
  const code = typeof status === 'number' ? status : status === null || status === '' ? 0 : Number(status);
  const understood =
    status === null || status === '' || (/^\d$/.test(String(status)) && code >= 0 && code <= 4);
  check(
    ctx,
    'receipt status',
    understood,
    understood ? `code ${code} (0 is "not found")` : `status ${show(status)} is not a code 0 to 4`,
  );
}

// ---------------------------------------------------------------- error bodies

async function probeErrorBody(ctx: ProbeContext): Promise<void> {
  const { target } = ctx;
  // No client, no value, a txid with letters: refused whatever the provider checks first.
  const answer = await exchange(
    target,
    'POST',
    url(target.baseUrl, '/v2/deposit/create'),
    apiKeyHeader(target),
    {
      json: { merchant: target.merchant, txid: 'not-digits' },
    },
  );
  const readable =
    answer.status >= 400 && answer.status < 500 && errorBodySchema.safeParse(answer.json).success;
  check(
    ctx,
    'error bodies',
    readable,
    `a deposit with an invalid body: ${describeAnswer(answer)}${readable ? '' : ' (pixflow needs a 4xx with a JSON message or error)'}`,
  );
}

// ---------------------------------------------------------------- the run

const PAYOUT = 'would send a payout; pixflow handles both sides';

export async function runConformance(
  target: ProviderTarget,
  options: ConformanceOptions,
): Promise<ConformanceReport> {
  const ctx: ProbeContext = { target, options, points: {}, checks: [], settings: {} };
  const token = await probeToken(ctx);
  await probeTokenErrors(ctx);
  let forms: FormsTaken | undefined;
  if (token) {
    const seen = await probeAuthForms(ctx, token);
    forms = judgeAuthForms(ctx, seen);
    if (forms) {
      judgeKycStatus(ctx, seen.kyc[forms.kyc]);
      await probeLiveness(ctx, token, forms.kyc);
    }
  }
  const noToken = token ? 'no authorization form was accepted' : 'no token was issued';
  for (const id of ['auth.header', 'kyc.status', 'liveness.correlation'] as const) {
    ctx.points[id] ??= { side: 'not probed', why: noToken };
  }
  const txid = await probeDeposit(ctx);
  await probeInquiry(ctx, token, forms?.inquiry ?? 'bearer', txid);
  await probeReceipts(ctx);
  await probeErrorBody(ctx);
  ctx.points['withdraw.duplicate'] = { side: 'not probed', why: PAYOUT };
  ctx.points['withdraw.create'] = { side: 'not probed', why: PAYOUT };
  const points = Object.fromEntries(
    OPEN_POINT_IDS.map((id) => [id, ctx.points[id] ?? { side: 'not probed', why: 'no probe ran' }]),
  ) as Record<OpenPointId, Finding>;
  return {
    baseUrl: target.baseUrl,
    authUrl: target.authUrl,
    points,
    checks: ctx.checks,
    settings: ctx.settings,
    ...(txid ? { depositTxid: txid } : {}),
    ok: ctx.checks.every((c) => c.ok),
  };
}

/** The words a finding prints as: `doc`, `not probed: <why>`, `neither: <what it answered>`. */
export function findingText(f: Finding): string {
  return f.side === 'not probed'
    ? `not probed: ${f.why}`
    : f.side === 'neither'
      ? `neither: ${f.observed}`
      : f.side;
}
