// Over 400 lines on purpose: the operator's policy page and a brand's share one field table, one
// form parser and one four-eyes flow (propose, approve, reject), so both read from one place.
import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { escapeHtml } from '../common/html';
import { BRAND_ID_PATTERN, brandIdSchema, DEFAULT_BRAND_ID } from '../contracts/brand';
import { getBrand, listBrands } from '../db/brands';
import { recordAction } from '../db/operator-actions';
import type { Operator } from '../db/operators';
import {
  type BrandPolicyVersionRow,
  getPolicyVersion,
  latestBrandPolicyVersion,
  latestPolicyVersion,
  listBrandPolicyVersions,
  listPolicyVersions,
  type PolicyVersionRow,
  pendingBrandPolicyChanges,
  pendingPolicyChanges,
} from '../db/policy';
import {
  BRAND_FIELDS,
  type BrandOverrides,
  checkedOverrides,
  OPERATOR_FIELDS,
  overrideOf,
  overrideRefusal,
  PERSON_FIELDS,
  withOverrides,
} from '../policy/brand';
import {
  approveBrandPolicyChange,
  brandChanges,
  proposeBrandPolicyChange,
  rejectBrandPolicyChange,
} from '../policy/brand-changes';
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
  applyAssignments,
  diffPolicies,
  type PolicyFieldChange,
  PolicyInputError,
  policyFields,
  shownValue,
} from '../policy/diff';
import type { Policy } from '../policy/schema';
import type { BackofficeDeps } from './deps';
import { optional, parseForm, say } from './forms';
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

/**
 * Only an admin sees or changes the policy, the operator's or a brand's: anyone else is refused,
 * and a change's refusal audited (a brand's naming the brand).
 */
async function adminOnly({ pool }: BackofficeDeps, operator: Operator, change: boolean, brand?: string) {
  if (roleAtLeast(operator.role, 'admin')) return;
  if (change)
    await recordAction(pool, {
      ...actorOf(operator),
      action: 'policy.change',
      outcome: 'refused',
      ...(brand ? { caseType: 'brand-policy', caseId: brand } : { caseType: 'policy' }),
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

function conflictRefusal(err: PolicyChangeRefused, back = PAGE): BackofficeError {
  return new BackofficeError(
    err.kind === 'same_admin' ? 403 : 409,
    (t) => ({ heading: t.policy.refused, message: `${t.policy.conflict[err.kind]} ${t.policy.noChange}` }),
    [],
    back,
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

/**
 * `?version=`: the version a case was decided under, shown marked in the history; `?brand=`, the
 * brand whose rules are shown (the default brand's are the operator's policy).
 */
const pageQuerySchema = z.object({
  version: z.coerce
    .number({ error: say('invalid') })
    .int(say('invalid'))
    .min(1, say('invalid'))
    .optional(),
  brand: optional(z.string({ error: say('invalid') }).regex(BRAND_ID_PATTERN, say('invalid'))),
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

async function showPage(deps: BackofficeDeps, req: Request, res: Response, version: number | undefined) {
  const current = await latestPolicyVersion(deps.pool);
  if (!current) throw notFoundPage((t) => t.policy.conflict.no_policy);
  page(req, res, 'policy', {
    current,
    fields: policyFields(policyOfRow(current)).map(([path, value]) => [path, shownValue(value)]),
    pending: await pendingOf(deps),
    history: await historyOf(deps, version),
    asked: version,
    brands: await listBrands(deps.pool),
    selected: DEFAULT_BRAND_ID,
    fieldPath,
    shown: shownValue,
  });
}

// A brand's rules (docs/policy.md, Rules of a brand): the operator's policy in force with the
// brand's overrides on it, changed through policy/brand-changes.ts as the CLI's `--brand` does,
// with the same four eyes and audit. The set form carries only the fields a brand may set, the
// give-back form only those the brand sets: each stays within the forms' 20 fields.

const brandPage = (brand: string) => `${PAGE}?brand=${encodeURIComponent(brand)}`;

/** Whose a field is at a brand: the brand's own, inherited (the brand may set it), the person's, the operator's. */
type FieldOwner = 'brand' | 'inherited' | 'person' | 'operator';

function ownerOf(path: string, overrides: BrandOverrides): FieldOwner {
  if (path in overrides) return 'brand';
  if (BRAND_FIELDS.includes(path)) return 'inherited';
  if (PERSON_FIELDS.includes(path)) return 'person';
  return 'operator';
}

/** What a form sent, field by field, to show again as typed after a refusal. */
type Typed = Record<string, string>;

interface BrandRefusal {
  form: 'set' | 'inherit';
  fields: Array<{ name: string; label: string; reason: string }>;
  values: Typed;
  inherit?: string[];
}

/** Why a brand may not have `path`, or another problem with it, in the page's words. */
function brandProblem(path: string, problem: string, t: Catalog): string {
  const w = t.brandPolicy;
  if (overrideRefusal(path) !== undefined) {
    if (PERSON_FIELDS.includes(path)) return `${w.owners.person}: ${w.why.person}`;
    if (OPERATOR_FIELDS.includes(path)) return `${w.owners.operator}: ${w.why.operator}`;
  }
  if (problem.startsWith('is not set by the brand')) return w.problems.notOverridden;
  if (problem.startsWith('changes nothing')) return w.problems.changesNothing;
  return t.policy.problems[problem] ?? problem;
}

const brandOverridesOf = (row: BrandPolicyVersionRow | undefined): BrandOverrides =>
  row ? checkedOverrides(row.overrides) : {};

/** The brand (404 unless it exists and is not the default brand, whose rules are the operator's). */
async function brandOf(deps: BackofficeDeps, id: unknown) {
  const parsed = brandIdSchema.safeParse(id);
  if (!parsed.success) throw notFoundPage((t) => t.brandPolicy.notFoundWhat);
  if (parsed.data === DEFAULT_BRAND_ID)
    throw new BackofficeError(
      400,
      (t) => ({ heading: t.brandPolicy.refused, message: t.brandPolicy.defaultIsOperator }),
      [],
      PAGE,
    );
  const brand = await getBrand(deps.pool, parsed.data);
  if (!brand) throw notFoundPage((t) => t.brandPolicy.notFoundWhat);
  return brand;
}

/** What the brand's rules stand on now: the operator's version in force and the brand's own. */
async function brandBase(deps: BackofficeDeps, brand: string) {
  const [operator, own] = await Promise.all([
    latestPolicyVersion(deps.pool),
    latestBrandPolicyVersion(deps.pool, brand),
  ]);
  if (!operator) throw notFoundPage((t) => t.policy.conflict.no_policy);
  const base = policyOfRow(operator);
  const overrides = brandOverridesOf(own);
  return { operator, own, base, overrides, inForce: withOverrides(base, overrides) };
}

/** The brand's newest versions, each with what it changed from the one before (laid on the operator's in force). */
async function brandHistoryOf(deps: BackofficeDeps, brand: string, base: Policy) {
  const versions = await listBrandPolicyVersions(deps.pool, brand, HISTORY + 1);
  return versions.slice(0, HISTORY).map((v, i) => ({
    ...v,
    changes: brandChanges(
      base,
      v.version === 1 ? {} : brandOverridesOf(versions[i + 1]),
      brandOverridesOf(v),
    ),
  }));
}

async function showBrandPage(
  deps: BackofficeDeps,
  req: Request,
  res: Response,
  brandId: string,
  refusal?: BrandRefusal,
  status = 200,
) {
  const brand = await brandOf(deps, brandId);
  const { operator, own, base, overrides, inForce } = await brandBase(deps, brand.id);
  const operatorValues = new Map(policyFields(base));
  const pending = await pendingBrandPolicyChanges(deps.pool, brand.id);
  page(
    req,
    res,
    'policy-brand',
    {
      brand,
      brands: await listBrands(deps.pool),
      selected: brand.id,
      // Not `operator`: the page's signed-in operator is that.
      operatorPolicy: operator,
      own,
      fields: policyFields(inForce).map(([path, value]) => ({
        path,
        value: shownValue(value),
        owner: ownerOf(path, overrides),
        operatorValue: shownValue(operatorValues.get(path) ?? ''),
      })),
      overridden: Object.keys(overrides),
      pending: pending.map((c) => ({
        ...c,
        changes: brandChanges(base, overrides, checkedOverrides(c.overrides)),
      })),
      history: await brandHistoryOf(deps, brand.id, base),
      refusal,
      fieldPath,
      shown: shownValue,
    },
    status,
  );
}

const reasonSchema = z
  .string({ error: say('mustSayWhy') })
  .trim()
  .min(1, say('mustSayWhy'))
  .max(500, say('atMost', 500));

/** The versions the page showed: a change over others is refused, as the operator's page does. */
const brandBaseSchema = {
  brandVersion: z.coerce
    .number({ error: say('invalid') })
    .int()
    .min(0, say('invalid')),
  operatorVersion: z.coerce
    .number({ error: say('invalid') })
    .int()
    .min(1, say('invalid')),
};

const brandSetFormSchema = z.object({ reason: reasonSchema, ...brandBaseSchema });

const brandInheritFormSchema = z.object({
  inherit: z
    .union([z.string(), z.array(z.string())], { error: say('required') })
    .transform((v) => (Array.isArray(v) ? v : [v])),
  reason: reasonSchema,
  ...brandBaseSchema,
});

/** The form's own fields, not fields of the policy. */
const FORM_KEYS = new Set(['_csrf', 'reason', 'brandVersion', 'operatorVersion', 'inherit']);

/** The form, or the fields parseForm would name on its error page, to name them on the brand's page instead. */
function formOr<S extends z.ZodType>(
  schema: S,
  body: unknown,
  t: Catalog,
  reasonLabel: string,
): { data: z.infer<S> } | { fields: BrandRefusal['fields'] } {
  try {
    return {
      data: parseForm(schema, body, PAGE, t, {
        fieldName: (name) => ({ reason: reasonLabel, inherit: t.brandPolicy.giveBack })[name],
      }),
    };
  } catch (err) {
    if (err instanceof BackofficeError) return { fields: err.fields };
    throw err;
  }
}

/** What the form sent as text, to show again. */
const typedOf = (body: unknown): Typed =>
  Object.fromEntries(
    Object.entries((body ?? {}) as Record<string, unknown>).filter(
      (e): e is [string, string] => typeof e[1] === 'string' && e[0] !== '_csrf',
    ),
  );

/**
 * The fields a set form changes, each `path=value` as typed, against the brand's policy in force;
 * a field the brand may not set, or a value its field refuses, named.
 */
function setOf(inForce: Policy, body: unknown, t: Catalog) {
  const set: Array<[string, string]> = [];
  const refused: BrandRefusal['fields'] = [];
  for (const [path, text] of Object.entries((body ?? {}) as Record<string, unknown>)) {
    if (FORM_KEYS.has(path)) continue;
    const problem = overrideRefusal(path);
    if (problem) {
      refused.push({ name: path, label: path, reason: brandProblem(path, problem, t) });
      continue;
    }
    if (typeof text !== 'string') {
      refused.push({ name: path, label: path, reason: t.formErrors.invalid });
      continue;
    }
    try {
      const next = applyAssignments(inForce, [[path, text]]);
      if (JSON.stringify(overrideOf(next, path)) !== JSON.stringify(overrideOf(inForce, path)))
        set.push([path, text]);
    } catch (err) {
      if (!(err instanceof PolicyInputError)) throw err;
      refused.push({ name: path, label: path, reason: brandProblem(err.field, err.problem, t) });
    }
  }
  return { set, refused };
}

/**
 * Proposes a brand's change over the versions the page was opened on (a version that came meanwhile
 * is refused in the change's own transaction: 409); the outcome as a flash, or the refusal naming
 * the field and its status.
 */
async function proposeForBrand(
  deps: BackofficeDeps,
  req: Request,
  res: Response,
  brand: string,
  form: BrandRefusal['form'],
  change: {
    set: Array<[string, string]>;
    inherit: string[];
    reason: string;
    brandVersion: number;
    operatorVersion: number;
  },
): Promise<{ fields: BrandRefusal['fields']; status: 400 | 409 } | undefined> {
  const t = wordsOf(req, res);
  const { brandVersion, operatorVersion, ...proposal } = change;
  try {
    const outcome = await proposeBrandPolicyChange(deps.pool, actorOf(signedIn(res)), {
      brand,
      ...proposal,
      baseVersion: brandVersion,
      baseOperatorVersion: operatorVersion,
    });
    req.session.flash = {
      kind: 'ok',
      text:
        outcome.kind === 'applied'
          ? t.brandPolicy.applied(brand, outcome.version)
          : t.policy.waiting(outcome.changeId),
    };
    return undefined;
  } catch (err) {
    if (err instanceof PolicyInputError) {
      const name = err.field === 'policy' ? (form === 'set' ? 'policy' : 'inherit') : err.field;
      const label = err.field === 'policy' ? t.brandPolicy.refused : err.field;
      return { fields: [{ name, label, reason: brandProblem(err.field, err.problem, t) }], status: 400 };
    }
    if (err instanceof PolicyChangeRefused && err.kind === 'stale') {
      const name = form === 'set' ? 'policy' : 'inherit';
      return {
        fields: [{ name, label: t.brandPolicy.refused, reason: t.brandPolicy.problems.stale }],
        status: 409,
      };
    }
    if (err instanceof PolicyChangeRefused) throw conflictRefusal(err, brandPage(brand));
    throw err;
  }
}

/** A brand's set form: the fields it changes become the brand's own. */
async function setForBrand(deps: BackofficeDeps, req: Request, res: Response) {
  const operator = signedIn(res);
  await adminOnly(deps, operator, true, String(req.params.brand));
  const brand = (await brandOf(deps, req.params.brand)).id;
  const t = wordsOf(req, res);
  const values = typedOf(req.body);
  const refuse = (fields: BrandRefusal['fields'], status = 400) =>
    showBrandPage(deps, req, res, brand, { form: 'set', fields, values }, status);
  const form = formOr(brandSetFormSchema, req.body, t, t.brandPolicy.setReasonLabel);
  const now = await brandBase(deps, brand);
  const { set, refused } = setOf(now.inForce, req.body, t);
  if ('fields' in form || refused.length)
    return refuse([...('fields' in form ? form.fields : []), ...refused]);
  if (!set.length)
    return refuse([
      { name: 'policy', label: t.brandPolicy.refused, reason: t.brandPolicy.problems.nothingToChange },
    ]);
  const problem = await proposeForBrand(deps, req, res, brand, 'set', {
    set,
    inherit: [],
    ...form.data,
  });
  if (problem) return refuse(problem.fields, problem.status);
  await redirectSaved(req, res, brandPage(brand));
}

/** A brand's give-back form: the ticked fields follow the operator's policy again. */
async function inheritForBrand(deps: BackofficeDeps, req: Request, res: Response) {
  const operator = signedIn(res);
  await adminOnly(deps, operator, true, String(req.params.brand));
  const brand = (await brandOf(deps, req.params.brand)).id;
  const t = wordsOf(req, res);
  const values = typedOf(req.body);
  const form = formOr(brandInheritFormSchema, req.body, t, t.brandPolicy.inheritReasonLabel);
  const ticked = 'data' in form ? form.data.inherit : [];
  const refuse = (fields: BrandRefusal['fields'], status = 400) =>
    showBrandPage(deps, req, res, brand, { form: 'inherit', fields, values, inherit: ticked }, status);
  if ('fields' in form)
    return refuse(
      form.fields.map((f) =>
        f.name === 'inherit' ? { ...f, reason: t.brandPolicy.problems.chooseField } : f,
      ),
    );
  const refused = ticked.flatMap((path) => {
    const problem = overrideRefusal(path);
    return problem ? [{ name: path, label: path, reason: brandProblem(path, problem, t) }] : [];
  });
  if (refused.length) return refuse(refused);
  const problem = await proposeForBrand(deps, req, res, brand, 'inherit', {
    set: [],
    ...form.data,
    inherit: [...new Set(ticked)],
  });
  if (problem) return refuse(problem.fields, problem.status);
  await redirectSaved(req, res, brandPage(brand));
}

/** A brand's rules: set, given back, and its pending changes approved or rejected. */
function brandPolicyRoutes(deps: BackofficeDeps) {
  const { pool } = deps;
  const r = Router();
  r.post('/policy/brands/:brand', (req, res) => setForBrand(deps, req, res));
  r.post('/policy/brands/:brand/inherit', (req, res) => inheritForBrand(deps, req, res));
  r.post('/policy/brands/:brand/changes/:id/approve', async (req, res) => {
    const operator = signedIn(res);
    await adminOnly(deps, operator, true, String(req.params.brand));
    const brand = (await brandOf(deps, req.params.brand)).id;
    const id = changeIdOf(req);
    try {
      const { version } = await approveBrandPolicyChange(pool, actorOf(operator), brand, id);
      req.session.flash = { kind: 'ok', text: wordsOf(req, res).brandPolicy.applied(brand, version) };
    } catch (err) {
      if (err instanceof PolicyChangeRefused) throw conflictRefusal(err, brandPage(brand));
      throw err;
    }
    await redirectSaved(req, res, brandPage(brand));
  });

  r.post('/policy/brands/:brand/changes/:id/reject', async (req, res) => {
    const operator = signedIn(res);
    await adminOnly(deps, operator, true, String(req.params.brand));
    const brand = (await brandOf(deps, req.params.brand)).id;
    const id = changeIdOf(req);
    const t = wordsOf(req, res);
    const { note } = parseForm(rejectFormSchema, req.body, brandPage(brand), t);
    try {
      await rejectBrandPolicyChange(pool, actorOf(operator), brand, id, note);
      req.session.flash = { kind: 'ok', text: t.policy.rejected(id) };
    } catch (err) {
      if (err instanceof PolicyChangeRefused) throw conflictRefusal(err, brandPage(brand));
      throw err;
    }
    await redirectSaved(req, res, brandPage(brand));
  });

  return r;
}

export function policyRoutes(deps: BackofficeDeps) {
  const { pool } = deps;
  const r = Router();

  r.get('/policy', async (req, res) => {
    await adminOnly(deps, signedIn(res), false);
    const { version, brand } = parseForm(pageQuerySchema, req.query, PAGE, wordsOf(req, res), {
      kind: 'filter',
    });
    if (brand !== undefined && brand !== DEFAULT_BRAND_ID) await showBrandPage(deps, req, res, brand);
    else await showPage(deps, req, res, version);
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

  r.use(brandPolicyRoutes(deps));
  return r;
}
