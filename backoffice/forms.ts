import type { RequestHandler } from 'express';
import { z } from 'zod';
import { BRAND_ID_PATTERN } from '../contracts/brand';
import { cpfSchema } from '../contracts/flow-input';
import { illFormedTextPath } from '../http/request-input';
import type { Catalog } from './i18n';
import { BackofficeError, wordsOf } from './render';

// The back office's forms and query strings, checked with zod like every other boundary: a field
// that does not parse is named back to the operator, in their language, and nothing happens.

type FormError = keyof Catalog['formErrors'];
const SAY = 'bo:';

/** A refusal of the back office's own rules: a key of the catalog's formErrors, and its one parameter. */
export const say = (key: FormError, param?: string | number) =>
  param === undefined ? `${SAY}${key}` : `${SAY}${key}:${param}`;

/** A CPF as people type it: dots and dash allowed. The rule is the API's (cpfSchema), the words ours. */
export const typedCpfSchema = z
  .string({ error: say('cpf') })
  .trim()
  .transform((v) => v.replace(/[.\-\s]/g, ''))
  .refine((v) => cpfSchema.safeParse(v).success, say('cpf'));

/**
 * A calendar day as the page asks for it, dd/mm/yyyy (the ISO form a link may carry, yyyy-mm-dd,
 * too): answered as yyyy-mm-dd.
 */
export const daySchema = z
  .string({ error: say('day') })
  .trim()
  .transform((v, ctx) => {
    const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(v) ?? /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
    if (!m) {
      ctx.addIssue({ code: 'custom', message: say('day') });
      return z.NEVER;
    }
    const [y, mo, d] = v.includes('/') ? [m[3], m[2], m[1]] : [m[1], m[2], m[3]];
    const iso = `${y}-${String(mo).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
    // Month 13 is no date at all; 31 February is one Date rolls over into March; before 1900
    // is a typing error (and Date.UTC reads years below 100 as 19xx).
    const at = Date.parse(`${iso}T00:00:00Z`);
    if (Number.isNaN(at) || !new Date(at).toISOString().startsWith(iso) || Number(y) < 1900) {
      ctx.addIssue({ code: 'custom', message: say('calendarDay') });
      return z.NEVER;
    }
    return iso;
  });

/** An optional field: absent or left empty, it is undefined. */
export const optional = <S extends z.ZodType>(schema: S) =>
  z.preprocess((v) => (v === '' ? undefined : v), schema.optional());

export const queueFiltersSchema = z.object({
  cpf: optional(typedCpfSchema),
  /** One of the operator's brands; absent: all of them (backoffice/operators.ts). */
  brand: optional(z.string({ error: say('invalid') }).regex(BRAND_ID_PATTERN, say('invalid'))),
  since: optional(daySchema),
  until: optional(daySchema),
  type: z.enum(['', 'deposit', 'withdrawal'], { error: say('invalid') }).optional(),
});

const reason = z
  .string({ error: say('mustSayWhy') })
  .trim()
  .min(1, say('mustSayWhy'))
  .max(1000, say('atMost', 1000));

export const reviewFormSchema = z.object({
  decision: z.enum(['approve', 'refuse'], { error: say('decisionReview') }),
  reason,
  expected: z.string().max(40).optional(),
});

export const resolutionFormSchema = z.object({
  decision: z.enum(['accept', 'return'], { error: say('decisionResolution') }),
  reason,
  expected: z.string().max(40).optional(),
});

/** An operator's mark on a monitoring alert, with the note that says why. */
export const alertDecisionFormSchema = z.object({
  decision: z.enum(['reviewed', 'reported'], { error: say('decisionAlert') }),
  note: z
    .string({ error: say('mustSayWhy') })
    .trim()
    .min(1, say('mustSayWhy'))
    .max(1000, say('atMost', 1000)),
});

/** An operator's decision on an impeded person (close, reinstate): only their reason. */
export const customerDecisionFormSchema = z.object({ reason });

/** An issue's words in the page's language: ours from the catalog, zod's from its own locale. */
function reasonOf(issue: z.core.$ZodIssue, t: Catalog): string {
  if (issue.message.startsWith(SAY)) {
    const [key, param] = issue.message.slice(SAY.length).split(/:(.*)/s) as [FormError, string | undefined];
    const words = t.formErrors[key];
    return typeof words === 'function' ? words(param ?? '') : (words ?? issue.message);
  }
  if (t.lang === 'en') return issue.message;
  // A rule shared with the API words its refusal in English: zod's own Portuguese, or a plain one.
  if (issue.code === 'custom') return t.formErrors.invalid;
  const localized = z.locales.ptBR().localeError(issue as Parameters<z.core.$ZodErrorMap>[0]);
  return (typeof localized === 'string' ? localized : localized?.message) ?? t.formErrors.invalid;
}

/**
 * The parsed form, or a 400 page naming each field that is wrong, in the page's language: by the
 * words the page calls it (the catalog's fields, or `fieldName` for a page's own).
 */
export function parseForm<S extends z.ZodType>(
  schema: S,
  input: unknown,
  back: string,
  t: Catalog,
  {
    kind = 'form',
    fieldName,
  }: { kind?: 'form' | 'filter'; fieldName?: (name: string) => string | undefined } = {},
): z.infer<S> {
  const r = schema.safeParse(input ?? {}, { reportInput: true });
  if (r.success) return r.data;
  const fields = r.error.issues.map((i) => {
    const name = i.path.join('.') || 'form';
    return { name, label: fieldName?.(name) ?? t.fields[name] ?? name, reason: reasonOf(i, t) };
  });
  throw new BackofficeError(
    400,
    (w) => ({
      heading: kind === 'filter' ? w.errors.filterRefused : w.errors.formRefused,
      message: w.errors.fieldsText,
    }),
    fields,
    back,
  );
}

/** Midnight of a calendar day in a zone, as an instant. */
export function startOfDayIn(zone: string, isoDay: string): Date {
  const [y, m, d] = isoDay.split('-').map(Number) as [number, number, number];
  const guess = Date.UTC(y, m - 1, d);
  // The zone's offset at that moment: its wall clock read as if it were UTC, minus the moment.
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(new Date(guess))
      .map((p) => [p.type, Number(p.value)]),
  ) as Record<string, number>;
  const n = (k: string) => parts[k] ?? 0;
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return new Date(guess - (wall - guess));
}

const unstorable = (name: string, t: Catalog) =>
  new BackofficeError(400, (w) => ({ heading: w.errors.refused, message: w.errors.unstorable }), [
    { name, label: t.fields[name] ?? name, reason: t.errors.unstorableField },
  ]);

/**
 * Whatever a page or form sends must be text Postgres can hold: no NUL, no lone surrogate, no
 * broken percent-encoding in the path (a 400 page, never a failed query).
 */
export const wellFormedInput: RequestHandler = (req, res, next) => {
  const refuse = (name: string) => next(unstorable(name, wordsOf(req, res)));
  let path: string;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    return refuse('path');
  }
  if (illFormedTextPath(path)) return refuse('path');
  const inQuery = illFormedTextPath(req.query);
  if (inQuery) return refuse(['query', ...inQuery].join('.'));
  const inBody = illFormedTextPath(req.body);
  if (inBody) return refuse(['form', ...inBody].join('.'));
  next();
};
