import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { escapeHtml } from '../common/html';
import { recordAction } from '../db/operator-actions';
import type { Operator } from '../db/operators';
import {
  getPolicyVersion,
  latestPolicyVersion,
  listPolicyVersions,
  type PolicyVersionRow,
  pendingPolicyChanges,
} from '../db/policy';
import {
  approvePolicyChange,
  changesOf,
  type PolicyActor,
  PolicyChangeRefused,
  policyOfRow,
  proposeAssignments,
  rejectPolicyChange,
} from '../policy/changes';
import {
  diffPolicies,
  type PolicyFieldChange,
  PolicyInputError,
  policyFields,
  shownValue,
} from '../policy/diff';
import type { BackofficeDeps } from './deps';
import { parseForm, say } from './forms';
import type { Catalog } from './i18n';
import { labelsFor } from './i18n';
import { BackofficeError, notFoundPage, page, redirectSaved, signedIn, wordsOf } from './render';
import { roleAtLeast } from './roles';

// The rules policy (docs/policy.md), for admins only: the version in force, its history with each
// version's diff, the changes waiting for a second admin, and a form to propose one. A change
// names its reason and is audited; one that loosens a money limit waits for another admin.

const PAGE = '/backoffice/policy';
const HISTORY = 20;

const proposeFormSchema = z.object({
  changes: z
    .string({ error: say('required') })
    .trim()
    .min(1, say('required'))
    .max(4000, say('atMost', 4000)),
  reason: z
    .string({ error: say('mustSayWhy') })
    .trim()
    .min(1, say('mustSayWhy'))
    .max(500, say('atMost', 500)),
  baseVersion: z.coerce
    .number({ error: say('invalid') })
    .int()
    .min(1, say('invalid')),
});

const rejectFormSchema = z.object({
  note: z.string().trim().max(500, say('atMost', 500)).optional(),
});

const actorOf = (o: Operator): PolicyActor => ({
  operatorId: o.id,
  operatorEmail: o.email,
  operatorRole: o.role,
});

/** Only an admin sees or changes the policy: anyone else is refused, and the refusal audited. */
async function adminOnly({ pool }: BackofficeDeps, operator: Operator, change: boolean) {
  if (roleAtLeast(operator.role, 'admin')) return;
  if (change)
    await recordAction(pool, {
      ...actorOf(operator),
      action: 'policy.change',
      outcome: 'refused',
      caseType: 'policy',
    });
  throw new BackofficeError(
    403,
    (t) => ({
      heading: t.errors.notAllowed,
      message: t.policy.mayNotSee(labelsFor(t.lang).role(operator.role)),
    }),
    [],
    change ? PAGE : undefined,
  );
}

/** A policy input problem in the operator's words, the field named. */
function inputRefusal(err: PolicyInputError, t: Catalog): BackofficeError {
  return new BackofficeError(
    400,
    (w) => ({ heading: w.policy.refused, message: w.policy.noChange }),
    [{ name: err.field, label: err.field, reason: t.policy.problems[err.problem] ?? err.problem }],
    PAGE,
  );
}

function conflictRefusal(err: PolicyChangeRefused): BackofficeError {
  return new BackofficeError(
    err.kind === 'same_admin' ? 403 : 409,
    (t) => ({ heading: t.policy.refused, message: `${t.policy.conflict[err.kind]} ${t.policy.noChange}` }),
    [],
    PAGE,
  );
}

function changeIdOf(req: Request): number {
  const id = z.coerce.number().int().min(1).safeParse(req.params.id);
  if (!id.success) throw notFoundPage((t) => t.policy.conflict.not_found);
  return id.data;
}

const changesSince = (before: PolicyVersionRow | undefined, v: PolicyVersionRow) =>
  before ? diffPolicies(policyOfRow(before), policyOfRow(v)) : undefined;

/**
 * The newest versions, each with its changes against the one before it (none for the first);
 * and `asked`, the version a case page links to, after them when it is older than those.
 */
async function historyOf(deps: BackofficeDeps, asked: number | undefined) {
  const versions = await listPolicyVersions(deps.pool, HISTORY + 1);
  const history = versions
    .slice(0, HISTORY)
    .map((v, i) => ({ ...v, changes: changesSince(versions[i + 1], v) }));
  if (asked === undefined || history.some((v) => v.version === asked)) return history;
  const [v, before] = await Promise.all([
    getPolicyVersion(deps.pool, asked),
    asked > 1 ? getPolicyVersion(deps.pool, asked - 1) : undefined,
  ]);
  if (!v) throw notFoundPage((t) => t.errors.what.policyVersion);
  return [...history, { ...v, changes: changesSince(before, v) }];
}

/** `?version=`: the version a case was decided under, shown marked in the history. */
const versionQuerySchema = z.object({
  version: z.coerce
    .number({ error: say('invalid') })
    .int(say('invalid'))
    .min(1, say('invalid'))
    .optional(),
});

async function pendingOf(deps: BackofficeDeps) {
  const pending = await pendingPolicyChanges(deps.pool);
  return Promise.all(
    pending.map(async (c) => {
      const base = await getPolicyVersion(deps.pool, c.baseVersion);
      return { ...c, changes: base ? changesOf(base, c) : ([] as PolicyFieldChange[]) };
    }),
  );
}

/** A field's path as HTML that may break after each dot on a phone, rather than mid-word. */
const fieldPath = (path: string) => path.split('.').map(escapeHtml).join('.<wbr>');

async function showPage(deps: BackofficeDeps, req: Request, res: Response) {
  const current = await latestPolicyVersion(deps.pool);
  if (!current) throw notFoundPage((t) => t.policy.conflict.no_policy);
  const { version } = parseForm(versionQuerySchema, req.query, PAGE, wordsOf(req, res), { kind: 'filter' });
  page(req, res, 'policy', {
    current,
    fields: policyFields(policyOfRow(current)).map(([path, value]) => [path, shownValue(value)]),
    pending: await pendingOf(deps),
    history: await historyOf(deps, version),
    asked: version,
    fieldPath,
    shown: shownValue,
  });
}

export function policyRoutes(deps: BackofficeDeps) {
  const { pool } = deps;
  const r = Router();

  r.get('/policy', async (req, res) => {
    await adminOnly(deps, signedIn(res), false);
    await showPage(deps, req, res);
  });

  r.post('/policy', async (req, res) => {
    const operator = signedIn(res);
    await adminOnly(deps, operator, true);
    const t = wordsOf(req, res);
    const form = parseForm(proposeFormSchema, req.body, PAGE, t, {
      fieldName: (name) => ({ changes: t.policy.changesLabel, reason: t.policy.reasonLabel })[name],
    });
    const current = await latestPolicyVersion(pool);
    if (!current) throw conflictRefusal(new PolicyChangeRefused('no_policy', 'no policy'));
    try {
      const outcome = await proposeAssignments(pool, actorOf(operator), {
        current,
        assignments: form.changes.split(/\r?\n/).filter((l) => l.trim()),
        reason: form.reason,
        baseVersion: form.baseVersion,
      });
      req.session.flash = {
        kind: 'ok',
        text:
          outcome.kind === 'applied' ? t.policy.applied(outcome.version) : t.policy.waiting(outcome.changeId),
      };
    } catch (err) {
      if (err instanceof PolicyInputError) throw inputRefusal(err, t);
      if (err instanceof PolicyChangeRefused) throw conflictRefusal(err);
      throw err;
    }
    await redirectSaved(req, res, PAGE);
  });

  r.post('/policy/changes/:id/approve', async (req, res) => {
    const operator = signedIn(res);
    await adminOnly(deps, operator, true);
    const id = changeIdOf(req);
    try {
      const { version } = await approvePolicyChange(pool, actorOf(operator), id);
      req.session.flash = { kind: 'ok', text: wordsOf(req, res).policy.applied(version) };
    } catch (err) {
      if (err instanceof PolicyChangeRefused) throw conflictRefusal(err);
      throw err;
    }
    await redirectSaved(req, res, PAGE);
  });

  r.post('/policy/changes/:id/reject', async (req, res) => {
    const operator = signedIn(res);
    await adminOnly(deps, operator, true);
    const id = changeIdOf(req);
    const t = wordsOf(req, res);
    const { note } = parseForm(rejectFormSchema, req.body, PAGE, t);
    try {
      await rejectPolicyChange(pool, actorOf(operator), id, note);
      req.session.flash = { kind: 'ok', text: t.policy.rejected(id) };
    } catch (err) {
      if (err instanceof PolicyChangeRefused) throw conflictRefusal(err);
      throw err;
    }
    await redirectSaved(req, res, PAGE);
  });

  return r;
}
