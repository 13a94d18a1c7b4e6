import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import type { Config } from '../common/config';
import { accountKeysOf, sealBrandAccount } from '../connectors/accounts';
import { brandIdSchema, DEFAULT_BRAND_ID } from '../contracts/brand';
import {
  apiPixSettingsSchema,
  BRAND_ACCOUNT_CONNECTORS,
  type BrandAccount,
  type BrandAccountConnector,
  brandAccountConnectorSchema,
  brandAccountSchema,
  brandAccountSecretsSchema,
  identityPaymentsSettingsSchema,
} from '../contracts/brand-account';
import { BrandAccountClash, removeBrandAccount, setBrandAccount } from '../db/brand-accounts';
import { type BrandActor, BrandNotFound } from '../db/brands';
import { type OperatorActionName, recordAction } from '../db/operator-actions';
import type { Operator } from '../db/operators';
import type { BackofficeDeps } from './deps';
import { type Catalog, labelsFor } from './i18n';
import { BackofficeError, notFoundPage, redirectSaved, signedIn, wordsOf } from './render';
import { roleAtLeast } from './roles';

// A brand's connector accounts on its page (docs/brands.md, Connector accounts), for admins: set
// (created or replaced whole) and removed as the operator CLI does it, through the same rules
// (contracts/brand-account.ts), sealing (connectors/accounts.ts) and writes with their audit rows
// (db/brand-accounts.ts). A secret comes in a password field, is sealed at once and never goes
// back out: not on the page, not in a refusal, not in the log or the audit trail.

export const BRANDS_PAGE = '/backoffice/brands';
export const brandPagePath = (id: string) => `${BRANDS_PAGE}/${encodeURIComponent(id)}`;

/** A field the page names back to the admin, in their language. */
export interface RefusedField {
  name: string;
  label: string;
  reason: string;
}

/** Which form a refusal is about, what it names, and what was typed (never a secret) to show again. */
export interface Refusal {
  form: string;
  fields: RefusedField[];
  values: Record<string, string>;
}

/** Renders the brand's page again with a refusal on one of its forms. */
export type ShowBrand = (
  req: Request,
  res: Response,
  id: string,
  refusal: Refusal,
  status: number,
) => Promise<void>;

const SETTINGS_SCHEMAS = {
  'identity-payments': identityPaymentsSettingsSchema,
  'api-pix': apiPixSettingsSchema,
} as const;

/** Each connector's settings and secrets, in the order the page shows them, and which may be left out. */
export const ACCOUNT_FIELDS = Object.fromEntries(
  BRAND_ACCOUNT_CONNECTORS.map((c) => {
    const fieldsOf = (shape: Record<string, z.ZodType>) =>
      Object.entries(shape).map(([name, schema]) => ({
        name,
        optional: schema.safeParse(undefined).success,
      }));
    return [
      c,
      {
        settings: fieldsOf(SETTINGS_SCHEMAS[c].shape),
        secrets: fieldsOf(brandAccountSecretsSchema[c].shape),
      },
    ];
  }),
) as Record<
  BrandAccountConnector,
  { settings: { name: string; optional: boolean }[]; secrets: { name: string; optional: boolean }[] }
>;

export const actorOf = (o: Operator): BrandActor => ({
  operatorId: o.id,
  operatorEmail: o.email,
  operatorRole: o.role,
});

/** Only an admin sees or changes the brands: anyone else is refused, and a change's attempt audited. */
export async function adminOnly(
  { pool }: BackofficeDeps,
  operator: Operator,
  change?: { action: OperatorActionName; caseId?: string },
) {
  if (roleAtLeast(operator.role, 'admin')) return;
  if (change)
    await recordAction(pool, {
      ...actorOf(operator),
      action: change.action,
      outcome: 'refused',
      caseType: 'brand',
      caseId: change.caseId,
    });
  throw new BackofficeError(
    403,
    (t) => ({
      heading: t.errors.notAllowed,
      message: t.brands.mayNotSee(labelsFor(t.lang).role(operator.role)),
    }),
    [],
    change ? BRANDS_PAGE : undefined,
  );
}

/** The brand id in the path; anything else is the page of a brand that does not exist. */
export function brandIdOf(req: Request): string {
  const id = brandIdSchema.safeParse(req.params.id);
  if (!id.success) throw notFoundPage((t) => t.brands.notFoundWhat);
  return id.data;
}

/**
 * Why a value was refused, in the page's language: a rule's own words in English (the CLI's), in
 * Portuguese the page's for the rules the page names itself, else zod's own Portuguese.
 */
export function reasonOf(issue: z.core.$ZodIssue, t: Catalog, given: boolean, own?: string): string {
  const p = t.brands.problems;
  if (!given) return p.required;
  if (t.lang === 'en') return issue.message;
  if (own) return own;
  if (issue.code === 'custom') return p.invalid;
  const localized = z.locales.ptBR().localeError(issue as Parameters<z.core.$ZodErrorMap>[0]);
  return (typeof localized === 'string' ? localized : localized?.message) ?? p.invalid;
}

/** The form's fields as typed, trimmed; an empty one is left out, as an option not given. */
export function typed(body: unknown, names: readonly string[]): Record<string, string> {
  const form = (body ?? {}) as Record<string, unknown>;
  const out: Record<string, string> = {};
  for (const name of names) {
    const v = form[name];
    if (typeof v === 'string' && v.trim() !== '') out[name] = v.trim();
  }
  return out;
}

const connectorOf = (req: Request): BrandAccountConnector => {
  const c = brandAccountConnectorSchema.safeParse(req.params.connector);
  if (!c.success) throw notFoundPage((t) => t.brands.notFoundWhat);
  return c.data;
};

/** The account the form describes, checked by the CLI's rules; or the fields refused. */
function accountOf(connector: BrandAccountConnector, body: unknown, t: Catalog) {
  const { settings: settingFields, secrets: secretFields } = ACCOUNT_FIELDS[connector];
  const settingNames = settingFields.map((f) => f.name);
  const secretNames = secretFields.map((f) => f.name);
  const settings = typed(body, settingNames);
  const secrets = typed(body, secretNames);
  const label = (name: string) => t.brands.fields[name] ?? name;
  // Typed again on a refusal: the settings, never a secret.
  const values = settings;
  const stray = Object.keys((body ?? {}) as object).filter(
    (k) => k !== '_csrf' && !settingNames.includes(k) && !secretNames.includes(k),
  );
  if (stray.length)
    return {
      refused: stray.map((name) => ({
        name,
        label: label(name),
        reason: t.brands.problems.notOfConnector(t.brands.connector[connector] ?? connector),
      })),
      values,
    };
  const checked = brandAccountSchema.safeParse({ connector, settings, secrets });
  if (checked.success) return { account: checked.data, values };
  const given = { ...settings, ...secrets };
  return {
    refused: checked.error.issues.map((issue) => {
      const name = String(issue.path.at(-1) ?? 'form');
      const own =
        issue.code === 'custom' && name === 'webhookOrigin'
          ? t.brands.problems.webhookOrigin
          : issue.code === 'custom' && name === 'webhookSecret'
            ? t.brands.problems.webhookSecretNeeded
            : undefined;
      // The secret the origin needs was not given: that is the refusal, not a missing field.
      const isGiven = name in given || issue.code === 'custom';
      return { name, label: label(name), reason: reasonOf(issue, t, isGiven, own) };
    }),
    values,
  };
}

/**
 * The environment's webhook values name the default brand's account while it has no record of its
 * own (connectors/accounts.ts): another brand holding one would have its notifications taken for
 * the default brand's. So, as the CLI does, another brand's account may not take WEBHOOK_SECRET,
 * WEBHOOK_PARTNER_ID or API_PIX_WEBHOOK_SECRET; the field that does, if any.
 */
function environmentsField(
  config: Pick<Config, 'WEBHOOK_SECRET' | 'WEBHOOK_PARTNER_ID' | 'API_PIX_WEBHOOK_SECRET'>,
  brandId: string,
  account: BrandAccount,
): 'webhookSecret' | 'partnerId' | undefined {
  if (brandId === DEFAULT_BRAND_ID) return undefined;
  if (account.connector === 'identity-payments') {
    if (account.secrets.webhookSecret === config.WEBHOOK_SECRET) return 'webhookSecret';
    if (account.settings.partnerId === config.WEBHOOK_PARTNER_ID) return 'partnerId';
    return undefined;
  }
  const envSecret = config.API_PIX_WEBHOOK_SECRET;
  return envSecret !== undefined && account.secrets.webhookSecret === envSecret ? 'webhookSecret' : undefined;
}

export function brandAccountRoutes(deps: BackofficeDeps, showBrand: ShowBrand) {
  const { pool } = deps;
  const r = Router();

  r.post('/brands/:id/accounts/:connector', async (req, res) => {
    const operator = signedIn(res);
    const id = brandIdOf(req);
    await adminOnly(deps, operator, { action: 'brand.account.set', caseId: id });
    const connector = connectorOf(req);
    const t = wordsOf(req, res);
    const form = `account:${connector}`;
    const parsed = accountOf(connector, req.body, t);
    if (!parsed.account)
      return showBrand(req, res, id, { form, fields: parsed.refused, values: parsed.values }, 400);
    const theEnvironments = environmentsField(deps.config, id, parsed.account);
    if (theEnvironments) {
      const field = {
        name: theEnvironments,
        label: t.brands.fields[theEnvironments] ?? theEnvironments,
        reason: t.brands.problems.environments,
      };
      return showBrand(req, res, id, { form, fields: [field], values: parsed.values }, 409);
    }
    const sealed = sealBrandAccount(accountKeysOf(deps.config), id, parsed.account);
    let outcome: Awaited<ReturnType<typeof setBrandAccount>>;
    try {
      outcome = await setBrandAccount(pool, actorOf(operator), {
        ...sealed,
        settings: sealed.settings as Record<string, unknown>,
      });
    } catch (err) {
      if (err instanceof BrandNotFound) throw notFoundPage((w) => w.brands.notFoundWhat);
      if (err instanceof BrandAccountClash) {
        const field = {
          name: err.field,
          label: t.brands.fields[err.field] ?? err.field,
          reason: t.brands.problems.clash,
        };
        return showBrand(req, res, id, { form, fields: [field], values: parsed.values }, 409);
      }
      throw err;
    }
    const name = t.brands.connector[connector] ?? connector;
    req.session.flash = {
      kind: 'ok',
      text: outcome.created
        ? t.brands.accountSet(name)
        : outcome.changed
          ? t.brands.accountReplaced(name)
          : t.brands.accountUnchanged(name),
    };
    await redirectSaved(req, res, brandPagePath(id));
  });

  r.post('/brands/:id/accounts/:connector/remove', async (req, res) => {
    const operator = signedIn(res);
    const id = brandIdOf(req);
    await adminOnly(deps, operator, { action: 'brand.account.remove', caseId: id });
    const connector = connectorOf(req);
    let removed: boolean;
    try {
      removed = await removeBrandAccount(pool, actorOf(operator), id, connector);
    } catch (err) {
      if (err instanceof BrandNotFound) throw notFoundPage((w) => w.brands.notFoundWhat);
      throw err;
    }
    if (!removed)
      throw new BackofficeError(
        409,
        (w) => ({
          heading: w.brands.noAccount,
          message: w.brands.noAccountText(w.brands.connector[connector] ?? connector),
        }),
        [],
        brandPagePath(id),
      );
    const t = wordsOf(req, res);
    req.session.flash = {
      kind: 'ok',
      text: t.brands.accountRemoved(t.brands.connector[connector] ?? connector),
    };
    await redirectSaved(req, res, brandPagePath(id));
  });

  return r;
}
