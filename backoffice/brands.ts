import { type Request, type Response, Router } from 'express';
import type { z } from 'zod';
import { brandPatchSchema, DEFAULT_BRAND_ID, formatCnpj, newBrandSchema } from '../contracts/brand';
import {
  BRAND_ACCOUNT_CONNECTORS,
  type StoredBrandAccount,
  storedBrandAccountSchema,
} from '../contracts/brand-account';
import { listBrandAccounts } from '../db/brand-accounts';
import { BrandExists, BrandNotFound, createBrand, getBrand, listBrands, updateBrand } from '../db/brands';
import type { Pool } from '../db/pool';
import {
  ACCOUNT_FIELDS,
  actorOf,
  adminOnly,
  brandAccountRoutes,
  brandIdOf,
  brandPagePath,
  type Refusal,
  reasonOf,
  typed,
} from './brand-accounts';
import type { BackofficeDeps } from './deps';
import type { Catalog } from './i18n';
import { notFoundPage, page, redirectSaved, signedIn, wordsOf } from './render';

// "Marcas" (docs/brands.md), for admins only, as the operator CLI's `brand` commands are: the
// brands, a new one, and each brand's page with its fields and its connector accounts
// (brand-accounts.ts). The same rules (contracts/brand.ts) and the same writes, each with its
// audit row in its transaction (db/brands.ts), as the CLI. A refused form is shown again, the
// fields named, with nothing changed.

const FIELDS = ['name', 'legalName', 'cnpj', 'authorization'] as const;

/** The fields zod refused, in the page's words. */
function refusedOf(issues: readonly z.core.$ZodIssue[], given: Record<string, string>, t: Catalog) {
  const p = t.brands.problems;
  return issues.map((issue) => {
    const name = String(issue.path[0] ?? 'form');
    const own = name === 'id' ? p.id : name === 'cnpj' ? p.cnpj : undefined;
    return { name, label: t.brands.fields[name] ?? name, reason: reasonOf(issue, t, name in given, own) };
  });
}

/** A stored account as the page shows it: each setting's value, and whether each secret is set. */
function accountView(
  account: StoredBrandAccount | undefined,
  connector: (typeof BRAND_ACCOUNT_CONNECTORS)[number],
) {
  if (!account) return undefined;
  const settings = account.settings as Record<string, unknown>;
  const set = account.secretsSet as readonly string[];
  return {
    createdAt: account.createdAt,
    updatedAt: account.updatedAt,
    settings: ACCOUNT_FIELDS[connector].settings
      .filter((f) => settings[f.name] !== undefined)
      .map((f) => ({ name: f.name, value: String(settings[f.name]) })),
    secrets: ACCOUNT_FIELDS[connector].secrets.map((f) => ({ name: f.name, set: set.includes(f.name) })),
  };
}

async function showBrands(pool: Pool, req: Request, res: Response, refusal?: Refusal, status = 200) {
  const brands = await listBrands(pool);
  const accounts = await listBrandAccounts(pool);
  page(
    req,
    res,
    'brands',
    {
      brands: brands.map((b) => ({
        ...b,
        cnpj: b.cnpj ? formatCnpj(b.cnpj) : null,
        connectors: accounts.filter((a) => a.brandId === b.id).map((a) => a.connector),
      })),
      refusal,
    },
    status,
  );
}

async function showBrand(
  pool: Pool,
  req: Request,
  res: Response,
  id: string,
  refusal?: Refusal,
  status = 200,
) {
  const brand = await getBrand(pool, id);
  if (!brand) throw notFoundPage((t) => t.brands.notFoundWhat);
  const stored = (await listBrandAccounts(pool, id)).map((a) => storedBrandAccountSchema.parse(a));
  page(
    req,
    res,
    'brand',
    {
      brand: { ...brand, cnpj: brand.cnpj ? formatCnpj(brand.cnpj) : null },
      isDefault: brand.id === DEFAULT_BRAND_ID,
      connectors: BRAND_ACCOUNT_CONNECTORS.map((connector) => {
        const account = stored.find((a) => a.connector === connector);
        return {
          connector,
          fields: ACCOUNT_FIELDS[connector],
          account: accountView(account, connector),
          // The form starts from the settings the account has.
          values: (account?.settings ?? {}) as Record<string, unknown>,
        };
      }),
      refusal,
    },
    status,
  );
}

export function brandRoutes(deps: BackofficeDeps) {
  const { pool } = deps;
  const r = Router();

  r.get('/brands', async (req, res) => {
    await adminOnly(deps, signedIn(res));
    await showBrands(pool, req, res);
  });

  r.post('/brands', async (req, res) => {
    const operator = signedIn(res);
    await adminOnly(deps, operator, { action: 'brand.create' });
    const t = wordsOf(req, res);
    const given = typed(req.body, ['id', ...FIELDS]);
    const parsed = newBrandSchema.safeParse(given);
    if (!parsed.success)
      return showBrands(
        pool,
        req,
        res,
        { form: 'new', fields: refusedOf(parsed.error.issues, given, t), values: given },
        400,
      );
    try {
      await createBrand(pool, actorOf(operator), parsed.data);
    } catch (err) {
      if (!(err instanceof BrandExists)) throw err;
      const field = { name: 'id', label: t.brands.fields.id ?? 'id', reason: t.brands.idTaken };
      return showBrands(pool, req, res, { form: 'new', fields: [field], values: given }, 409);
    }
    req.session.flash = { kind: 'ok', text: t.brands.created(parsed.data.id) };
    await redirectSaved(req, res, brandPagePath(parsed.data.id));
  });

  r.get('/brands/:id', async (req, res) => {
    await adminOnly(deps, signedIn(res));
    await showBrand(pool, req, res, brandIdOf(req));
  });

  r.post('/brands/:id', async (req, res) => {
    const operator = signedIn(res);
    const id = brandIdOf(req);
    await adminOnly(deps, operator, { action: 'brand.update', caseId: id });
    const t = wordsOf(req, res);
    const given = typed(req.body, FIELDS);
    const parsed = brandPatchSchema.safeParse(given);
    // Left out, a field keeps its value (as an option the CLI is not given); a brand keeps a name.
    // The form always names the brand, so "name at least one field" is said as the name missing.
    const fields = parsed.success
      ? []
      : refusedOf(
          parsed.error.issues.filter((i) => i.path.length),
          given,
          t,
        );
    if (!given.name)
      fields.unshift({
        name: 'name',
        label: t.brands.fields.name ?? 'name',
        reason: t.brands.problems.required,
      });
    if (!parsed.success || fields.length)
      return showBrand(pool, req, res, id, { form: 'details', fields, values: given }, 400);
    let changed: boolean;
    try {
      ({ changed } = await updateBrand(pool, actorOf(operator), id, parsed.data));
    } catch (err) {
      if (err instanceof BrandNotFound) throw notFoundPage((w) => w.brands.notFoundWhat);
      throw err;
    }
    req.session.flash = { kind: 'ok', text: changed ? t.brands.updated(id) : t.brands.unchanged(id) };
    await redirectSaved(req, res, brandPagePath(id));
  });

  r.use(
    brandAccountRoutes(deps, (req, res, id, refusal, status) =>
      showBrand(pool, req, res, id, refusal, status),
    ),
  );
  return r;
}
