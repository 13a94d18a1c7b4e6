import { stringify } from 'csv-stringify/sync';
import { Router } from 'express';
import { z } from 'zod';
import { listActions, recordAction } from '../db/operator-actions';
import type { BackofficeDeps } from './deps';
import { parseForm } from './forms';
import { page, signedIn, wordsOf } from './render';

// The audit trail: every operator action, newest first on the page; oldest first in the CSV, which
// a spreadsheet opens without running anything in it.

const PAGE_ROWS = 500;
const EXPORT_ROWS = 100_000;

const exportQuerySchema = z.object({ case: z.string().min(1).max(200).optional() });

/** A cell a spreadsheet would read as a formula is written as text. */
const inert = (v: string) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v);

export function auditRoutes({ pool }: BackofficeDeps) {
  const r = Router();
  r.get('/audit', async (req, res) => {
    page(req, res, 'audit', { actions: await listActions(pool, { order: 'newest', limit: PAGE_ROWS }) });
  });
  r.get('/audit.csv', async (req, res) => {
    const operator = signedIn(res);
    const q = parseForm(exportQuerySchema, req.query, '/backoffice/audit', wordsOf(req, res), {
      kind: 'filter',
    });
    const actions = await listActions(pool, {
      caseIds: q.case ? [q.case] : undefined,
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
    const json = (v: unknown) => (v === null || v === undefined ? '' : JSON.stringify(v));
    const csv = stringify(
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
    const name = q.case ? `pixflow-audit-${q.case.replace(/[^\w.-]/g, '_')}.csv` : 'pixflow-audit.csv';
    res
      .type('text/csv')
      .set('content-disposition', `attachment; filename="${name}"`)
      .set('cache-control', 'no-store')
      .send(csv);
  });
  return r;
}
