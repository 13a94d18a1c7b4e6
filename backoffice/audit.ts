import { stringify } from 'csv-stringify/sync';
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { depositWorkflowId } from '../contracts/deposit';
import { withdrawalWorkflowId } from '../contracts/withdrawal';
import {
  type ActionFilter,
  actionOutcomes,
  listActions,
  type OperatorAction,
  operatorActionNames,
  recordAction,
} from '../db/operator-actions';
import type { Pool } from '../db/pool';
import type { BackofficeDeps } from './deps';
import { daySchema, optional, parseForm, say, startOfDayIn } from './forms';
import { brandChoicesOf, brandsFor } from './operators';
import { page, signedIn, wordsOf } from './render';

// The audit trail: every operator action, newest first on the page, a page at a time (keyset by
// row id, so a row added meanwhile never shifts a page); oldest first in the CSV, which a
// spreadsheet opens without running anything in it. Both take the same filters: who, what, with
// what outcome, on which case, between which days (in the operator's zone).

const PAGE = '/backoffice/audit';
export const pageSizes = ['20', '50', '100', '200'] as const;
const DEFAULT_PAGE_SIZE = 50;
const EXPORT_ROWS = 100_000;

const text = (max: number) =>
  z
    .string({ error: say('text') })
    .trim()
    .max(max, say('atMost', max));
/** A row id to page from: digits, within bigint. */
const cursor = z.string({ error: say('cursor') }).regex(/^[1-9]\d{0,17}$/, say('cursor'));

const filtersSchema = z.object({
  who: optional(text(200)),
  action: optional(z.enum(operatorActionNames, { error: say('invalid') })),
  outcome: optional(z.enum(actionOutcomes, { error: say('invalid') })),
  case: optional(text(200)),
  from: optional(daySchema),
  to: optional(daySchema),
});

const auditQuerySchema = filtersSchema
  .extend({
    size: optional(z.enum(pageSizes, { error: say('pageSize') })),
    before: optional(cursor),
    after: optional(cursor),
  })
  .superRefine((q, ctx) => {
    if (q.from && q.to && q.to < q.from)
      ctx.addIssue({ code: 'custom', path: ['to'], message: say('untilBeforeFrom') });
    if (q.before && q.after) ctx.addIssue({ code: 'custom', path: ['after'], message: say('oneCursor') });
  });

type Filters = z.infer<typeof filtersSchema>;

/**
 * The rows a filter asks for; a case is named by its flow id, or a deposit's txid or a withdrawal's
 * transactionId at any of `brands` (the operator's).
 */
function filterOf(f: Filters, zone: string, brands: string[]): Omit<ActionFilter, 'order' | 'limit'> {
  const c = f.case;
  return {
    caseIds: c
      ? [c, ...brands.flatMap((b) => [depositWorkflowId(c, b), withdrawalWorkflowId(c, b)])]
      : undefined,
    operatorEmail: f.who,
    action: f.action,
    outcome: f.outcome,
    from: f.from ? startOfDayIn(zone, f.from) : undefined,
    until: f.to ? new Date(startOfDayIn(zone, f.to).getTime() + 86_400_000) : undefined,
  };
}

/** The query string of these filters (and paging), as links carry it. */
function queryOf(f: Filters & { size?: string }, more: Record<string, string> = {}): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries({ ...f, ...more })) if (v) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** A cell a spreadsheet would read as a formula is written as text. */
const inert = (v: string) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v);

const typed = (req: Request, name: string) => (typeof req.query[name] === 'string' ? req.query[name] : '');

/** The rows as the CSV has them: every column, codes as stored, JSON as JSON. */
function csvOf(actions: OperatorAction[]): string {
  const json = (v: unknown) => (v === null || v === undefined ? '' : JSON.stringify(v));
  return stringify(
    actions.map((a) => [
      a.id,
      a.at,
      a.operatorEmail,
      a.operatorRole ?? '',
      a.action,
      a.outcome,
      a.caseType ?? '',
      a.caseId ?? '',
      json(a.before),
      json(a.after),
      a.reason ?? '',
    ]),
    {
      header: true,
      columns: [
        'id',
        'at',
        'operator',
        'role',
        'action',
        'outcome',
        'case_type',
        'case_id',
        'before',
        'after',
        'reason',
      ],
      cast: { string: inert },
    },
  );
}

/** A page of the trail: the filters' rows from a cursor, and the links to the pages beside it. */
async function auditPage(pool: Pool, req: Request, res: Response) {
  const operator = signedIn(res);
  const q = parseForm(auditQuerySchema, req.query, PAGE, wordsOf(req, res), { kind: 'filter' });
  const size = q.size ? Number(q.size) : DEFAULT_PAGE_SIZE;
  const filters: Filters = {
    who: q.who,
    action: q.action,
    outcome: q.outcome,
    case: q.case,
    from: q.from,
    to: q.to,
  };
  // One row more than the page: whether there is another page that way.
  const rows = await listActions(pool, {
    ...filterOf(filters, operator.timeZone, await brandChoicesOf(pool, res)),
    brands: brandsFor(res),
    beforeId: q.before,
    afterId: q.after,
    order: 'newest',
    limit: size + 1,
  });
  const more = rows.length > size;
  // Read upwards from `after`, the extra row is the newest; otherwise the oldest.
  const actions = more ? (q.after ? rows.slice(1) : rows.slice(0, size)) : rows;
  const [first, last] = [actions[0], actions[actions.length - 1]];
  const link = (cursor: Record<string, string> = {}) =>
    `${PAGE}${queryOf({ ...filters, ...(q.size ? { size: q.size } : {}) }, cursor)}`;
  const olderThere = q.after ? true : more;
  const newerThere = q.after ? more : q.before !== undefined;
  page(req, res, 'audit', {
    actions,
    filtered: Object.values(filters).some(Boolean),
    // As typed (days as the operator wrote them), for the form to show back.
    form: {
      who: typed(req, 'who'),
      action: q.action ?? '',
      outcome: q.outcome ?? '',
      case: typed(req, 'case'),
      from: typed(req, 'from'),
      to: typed(req, 'to'),
      size: String(size),
    },
    pageSizes,
    actionNames: operatorActionNames,
    outcomes: actionOutcomes,
    links: {
      newest: q.before || q.after ? link() : undefined,
      newer: newerThere && first ? link({ after: String(first.id) }) : undefined,
      older: olderThere && last ? link({ before: String(last.id) }) : undefined,
      export: `${PAGE}.csv${queryOf(filters)}`,
    },
  });
}

export function auditRoutes({ pool }: BackofficeDeps) {
  const r = Router();
  r.get('/audit', (req, res) => auditPage(pool, req, res));
  r.get('/audit.csv', async (req, res) => {
    const operator = signedIn(res);
    const q = parseForm(filtersSchema, req.query, PAGE, wordsOf(req, res), { kind: 'filter' });
    const actions = await listActions(pool, {
      ...filterOf(q, operator.timeZone, await brandChoicesOf(pool, res)),
      brands: brandsFor(res),
      order: 'oldest',
      limit: EXPORT_ROWS,
    });
    await recordAction(pool, {
      operatorId: operator.id,
      operatorEmail: operator.email,
      operatorRole: operator.role,
      action: 'audit.export',
      outcome: 'done',
      caseType: q.case ? 'flow' : undefined,
      caseId: q.case,
    });
    const name = q.case ? `pixflow-audit-${q.case.replace(/[^\w.-]/g, '_')}.csv` : 'pixflow-audit.csv';
    res
      .type('text/csv')
      .set('content-disposition', `attachment; filename="${name}"`)
      .set('cache-control', 'no-store')
      .send(csvOf(actions));
  });
  return r;
}
