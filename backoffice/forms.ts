import type { RequestHandler } from 'express';
import { z } from 'zod';
import { cpfSchema } from '../contracts/flow-input';
import { illFormedTextPath } from '../http/request-input';
import { BackofficeError } from './render';

// The back office's forms and query strings, checked with zod like every other boundary: a field
// that does not parse is named back to the operator and nothing happens.

/** A CPF as people type it: dots and dash allowed. */
export const typedCpfSchema = z
  .string()
  .trim()
  .transform((v) => v.replace(/[.\-\s]/g, ''))
  .pipe(cpfSchema);

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, { error: 'must be a date, YYYY-MM-DD', abort: true })
  .refine((v) => new Date(`${v}T00:00:00Z`).toISOString().startsWith(v), 'is not a calendar day');

export const queueFiltersSchema = z.object({
  cpf: z.union([z.literal(''), typedCpfSchema]).optional(),
  since: z.union([z.literal(''), day]).optional(),
  until: z.union([z.literal(''), day]).optional(),
  type: z.enum(['', 'deposit', 'withdrawal']).optional(),
});

const reason = z.string().trim().min(1, 'must say why').max(1000, 'must be at most 1000 characters');

export const reviewFormSchema = z.object({
  decision: z.enum(['approve', 'refuse'], { error: 'must be approve or refuse' }),
  reason,
  expected: z.string().max(40).optional(),
});

export const resolutionFormSchema = z.object({
  decision: z.enum(['accept', 'return'], { error: 'must be accept or return' }),
  reason,
  expected: z.string().max(40).optional(),
});

/** The parsed form, or a 400 page naming each field that is wrong. */
export function parseForm<S extends z.ZodType>(schema: S, input: unknown, back: string): z.infer<S> {
  const r = schema.safeParse(input ?? {});
  if (r.success) return r.data;
  throw new BackofficeError(
    400,
    'Form not accepted',
    'Some fields need another look.',
    r.error.issues.map((i) => ({ name: i.path.join('.') || 'form', reason: i.message })),
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

const unstorable = (name: string) =>
  new BackofficeError(400, 'Request refused', 'Something sent cannot be stored or read as text.', [
    { name, reason: 'holds a NUL character, a lone surrogate or broken percent-encoding' },
  ]);

/**
 * Whatever a page or form sends must be text Postgres can hold: no NUL, no lone surrogate, no
 * broken percent-encoding in the path (a 400 page, never a failed query).
 */
export const wellFormedInput: RequestHandler = (req, _res, next) => {
  let path: string;
  try {
    path = decodeURIComponent(req.path);
  } catch {
    return next(unstorable('path'));
  }
  if (illFormedTextPath(path)) return next(unstorable('path'));
  const inQuery = illFormedTextPath(req.query);
  if (inQuery) return next(unstorable(['query', ...inQuery].join('.')));
  const inBody = illFormedTextPath(req.body);
  if (inBody) return next(unstorable(['form', ...inBody].join('.')));
  next();
};
