import { stringify } from 'csv-stringify/sync';
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { cpfHash } from '../common/pii';
import {
  type AlertDecision,
  alertDecisions,
  alertRules,
  alertStatuses,
  decidableFrom,
} from '../contracts/alert';
import { type AlertRow, decideAlert, getAlert, listAlerts } from '../db/alerts';
import { listActions, recordAction } from '../db/operator-actions';
import { type GrantedBrands, maySeeFlow } from '../db/operator-brands';
import type { Operator } from '../db/operators';
import { inTransaction, type Pool } from '../db/pool';
import type { BackofficeDeps } from './deps';
import { ageOf, type Formatter } from './format';
import {
  alertDecisionFormSchema,
  daySchema,
  optional,
  parseForm,
  say,
  startOfDayIn,
  typedCpfSchema,
} from './forms';
import { type Catalog, labelsFor } from './i18n';
import { brandOfWorkflowId, brandsFor, grantedOf } from './operators';
import { BackofficeError, notFoundPage, page, redirectSaved, signedIn, wordsOf } from './render';
import { roleAtLeast } from './roles';

// The monitoring alerts' queue (docs/monitoring.md): the alerts the monitor raised, newest first,
// filtered by status, rule, person and the days they were raised (in the operator's zone); each
// alert's page with what tripped it, where a reviewer marks it reviewed or reported with a note;
// and the same filters as CSV for the compliance report. Every mark and export is audited.

const PAGE = '/backoffice/alerts';
const PAGE_SIZE = 100;
const EXPORT_ROWS = 100_000;

const filtersSchema = z
  .object({
    status: optional(z.enum(alertStatuses, { error: say('invalid') })),
    rule: optional(z.enum(alertRules, { error: say('invalid') })),
    cpf: optional(typedCpfSchema),
    from: optional(daySchema),
    to: optional(daySchema),
  })
  .superRefine((q, ctx) => {
    if (q.from && q.to && q.to < q.from)
      ctx.addIssue({ code: 'custom', path: ['to'], message: say('untilBeforeFrom') });
  });
type Filters = z.infer<typeof filtersSchema>;

const alertIdSchema = z.string().regex(/^alr_[0-9a-f]{32}$/);

/** A flow id the operator's brands reach (a person's movements may span brands). */
const seesFlowId = (g: GrantedBrands, id: string) =>
  !/^([a-z][a-z0-9-]{1,39}:)?(deposit|withdrawal)-/.test(id) ||
  maySeeFlow(g, { type: 'deposit', brandId: brandOfWorkflowId(id) });

/**
 * An alert as this operator may see it: its brand (its triggering flow's), and among the flows it
 * counted only those of the operator's brands; undefined when its flow is another brand's.
 */
function alertFor<A extends AlertRow>(g: GrantedBrands, a: A): (A & { brandId: string }) | undefined {
  if (!seesFlowId(g, a.flowId)) return undefined;
  return { ...a, brandId: brandOfWorkflowId(a.flowId), flowIds: a.flowIds.filter((f) => seesFlowId(g, f)) };
}

/** The alert of this id, when the operator's brands reach it. */
async function visibleAlert(db: Pool, res: Response, id: string) {
  const alert = alertIdSchema.safeParse(id).success ? await getAlert(db, id) : undefined;
  return alert && alertFor(grantedOf(res), alert);
}
const alertPath = (id: string) => `${PAGE}/${id}`;

function filterOf(f: Filters, zone: string, piiKey: string) {
  return {
    status: f.status,
    rule: f.rule,
    cpfHash: f.cpf ? cpfHash(f.cpf, piiKey) : undefined,
    from: f.from ? startOfDayIn(zone, f.from) : undefined,
    until: f.to ? new Date(startOfDayIn(zone, f.to).getTime() + 86_400_000) : undefined,
  };
}

const typed = (req: Request, name: string) => (typeof req.query[name] === 'string' ? req.query[name] : '');

/** The query string the page was asked with, for the export link: the same filters. */
function queryOf(req: Request): string {
  const q = new URLSearchParams();
  for (const name of ['status', 'rule', 'cpf', 'from', 'to'])
    if (typed(req, name)) q.set(name, typed(req, name));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** One value of an alert's facts as the page shows it: money, a time, a duration, a count. */
export function factText(key: string, value: number | string, t: Catalog, fmt: Formatter): string {
  if (typeof value === 'number' && key.endsWith('Centavos')) return fmt.brl(value);
  if (typeof value === 'number' && key.endsWith('Ms'))
    return ageOf(new Date(0).toISOString(), new Date(value), t.age);
  if (typeof value === 'string' && /At$|^at$/.test(key)) return fmt.time(value);
  if (key === 'direction') return t.alerts.direction[String(value)] ?? String(value);
  return String(value);
}

/** The facts as label and text, in the catalog's order; the queue's summary leaves out the trigger's time. */
function factsOf(a: AlertRow, t: Catalog, fmt: Formatter, summary = false) {
  const order = Object.keys(t.alerts.fact);
  const rank = (k: string) => (order.includes(k) ? order.indexOf(k) : order.length);
  return Object.entries(a.facts)
    .filter(([k]) => !(summary && k === 'at'))
    .sort(([x], [y]) => rank(x) - rank(y))
    .map(([k, v]) => [t.alerts.fact[k] ?? k, factText(k, v, t, fmt)] as const);
}

/** A cell a spreadsheet would read as a formula is written as text. */
const inert = (v: string) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v);

/**
 * The alerts as the compliance report takes them: codes as stored, amounts in centavos, facts as
 * JSON, and the rules policy version whose thresholds raised each.
 */
function csvOf(alerts: AlertRow[]): string {
  return stringify(
    alerts.map((a) => [
      a.id,
      a.raisedAt,
      a.rule,
      a.status,
      a.cpfMasked ?? '',
      a.cpfHash,
      a.flowId,
      a.flowIds.join(' '),
      JSON.stringify(a.facts),
      a.decidedBy ?? '',
      a.decidedAt ?? '',
      a.note ?? '',
      a.policyVersion ?? '',
    ]),
    {
      header: true,
      columns: [
        'id',
        'raised_at',
        'rule',
        'status',
        'cpf_masked',
        'cpf_hash',
        'triggered_by',
        'flow_ids',
        'facts',
        'decided_by',
        'decided_at',
        'note',
        'policy_version',
      ],
      cast: { string: inert },
    },
  );
}

const auditOf = (operator: Operator) => ({
  operatorId: operator.id,
  operatorEmail: operator.email,
  operatorRole: operator.role,
});

const ACTION: Record<AlertDecision, 'alert.review' | 'alert.report'> = {
  reviewed: 'alert.review',
  reported: 'alert.report',
};

/** A reviewer's mark on an alert, under a lock of its row; every attempt is a row of the audit trail. */
async function markAlert(pool: Pool, req: Request, res: Response) {
  const operator = signedIn(res);
  const id = String(req.params.id ?? '');
  const back = alertPath(id);
  const t = wordsOf(req, res);
  if (!(await visibleAlert(pool, res, id))) throw notFoundPage((w) => w.errors.what.alert);
  if (!roleAtLeast(operator.role, 'reviewer')) {
    await recordAction(pool, {
      ...auditOf(operator),
      action:
        typeof req.body?.decision === 'string' && req.body.decision === 'reported'
          ? 'alert.report'
          : 'alert.review',
      outcome: 'refused',
      caseType: 'alert',
      caseId: id,
    });
    throw new BackofficeError(
      403,
      (w) => ({
        heading: w.errors.notAllowed,
        message: w.alerts.mayNotDecide(labelsFor(w.lang).role(operator.role)),
      }),
      [],
      back,
    );
  }
  const form = parseForm(alertDecisionFormSchema, req.body, back, t);
  const outcome = await inTransaction(pool, async (client) => {
    const before = await getAlert(client, id, true);
    const after = await decideAlert(client, {
      id,
      status: form.decision,
      from: decidableFrom[form.decision],
      by: operator.email,
      note: form.note,
      at: new Date(),
    });
    await recordAction(client, {
      ...auditOf(operator),
      action: ACTION[form.decision],
      outcome: after ? 'done' : 'conflict',
      caseType: 'alert',
      caseId: id,
      before: before && { status: before.status },
      after: after && { status: after.status },
      reason: form.note,
    });
    return { after, now: before?.status ?? '' };
  });
  if (!outcome.after) {
    throw new BackofficeError(
      409,
      (w) => ({
        heading: w.alerts.notOpen,
        message: w.alerts.notOpenText(labelsFor(w.lang).alertStatus(outcome.now)),
      }),
      [],
      back,
    );
  }
  req.session.flash = { kind: 'ok', text: t.alerts.done[form.decision] ?? '' };
  await redirectSaved(req, res, back);
}

export function alertRoutes({ pool, config }: BackofficeDeps) {
  const r = Router();

  r.get('/alerts', async (req, res) => {
    const operator = signedIn(res);
    const f = parseForm(filtersSchema, req.query, PAGE, wordsOf(req, res), { kind: 'filter' });
    const { items, total } = await listAlerts(pool, {
      ...filterOf(f, operator.timeZone, config.PII_HASH_KEY),
      order: 'newest',
      limit: PAGE_SIZE,
      brands: brandsFor(res),
    });
    const t = wordsOf(req, res);
    const g = grantedOf(res);
    page(req, res, 'alerts', {
      items: items.flatMap((a) => alertFor(g, a) ?? []),
      total,
      rules: alertRules,
      statuses: alertStatuses,
      // As typed: the form shows back what the operator wrote.
      form: {
        status: f.status ?? '',
        rule: f.rule ?? '',
        cpf: typed(req, 'cpf'),
        from: typed(req, 'from'),
        to: typed(req, 'to'),
      },
      filtered: Object.values(f).some(Boolean),
      exportLink: `${PAGE}.csv${queryOf(req)}`,
      factsOf: (a: AlertRow, fmt: Formatter) => factsOf(a, t, fmt, true),
    });
  });

  r.get('/alerts.csv', async (req, res) => {
    const operator = signedIn(res);
    const f = parseForm(filtersSchema, req.query, PAGE, wordsOf(req, res), { kind: 'filter' });
    const { items } = await listAlerts(pool, {
      ...filterOf(f, operator.timeZone, config.PII_HASH_KEY),
      order: 'oldest',
      limit: EXPORT_ROWS,
      brands: brandsFor(res),
    });
    const g = grantedOf(res);
    const rows = items.flatMap((a) => alertFor(g, a) ?? []);
    await recordAction(pool, {
      ...auditOf(operator),
      action: 'alert.export',
      outcome: 'done',
      after: {
        rows: rows.length,
        ...(f.status ? { status: f.status } : {}),
        ...(f.rule ? { rule: f.rule } : {}),
      },
    });
    res
      .type('text/csv')
      .set('content-disposition', 'attachment; filename="pixflow-alerts.csv"')
      .set('cache-control', 'no-store')
      .send(csvOf(rows));
  });

  r.get('/alerts/:id', async (req, res) => {
    const id = req.params.id ?? '';
    const alert = await visibleAlert(pool, res, id);
    if (!alert) throw notFoundPage((w) => w.errors.what.alert);
    const operator = signedIn(res);
    const t = wordsOf(req, res);
    page(req, res, 'alert', {
      alert,
      factsOf: (a: AlertRow, fmt: Formatter) => factsOf(a, t, fmt),
      mayDecide: roleAtLeast(operator.role, 'reviewer'),
      decisions: alertDecisions.filter((d) => (decidableFrom[d] as readonly string[]).includes(alert.status)),
      actions: await listActions(pool, { caseIds: [alert.id], order: 'newest', limit: 200 }),
      filtered: false,
    });
  });

  r.post('/alerts/:id/decision', (req, res) => markAlert(pool, req, res));
  return r;
}
