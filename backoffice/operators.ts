import { type Response, Router } from 'express';
import { z } from 'zod';
import { BRAND_ID_PATTERN } from '../contracts/brand';
import { DEFAULT_BRAND } from '../contracts/flow';
import { listBrands } from '../db/brands';
import { recordAction } from '../db/operator-actions';
import {
  brandsParam,
  changeGrant,
  type GrantedBrands,
  GrantTargetNotFound,
  listOperatorGrants,
  maySeeFlow,
} from '../db/operator-brands';
import type { Operator } from '../db/operators';
import type { Pool } from '../db/pool';
import type { BackofficeDeps } from './deps';
import { optional, parseForm, say } from './forms';
import { labelsFor } from './i18n';
import { BackofficeError, notFoundPage, page, redirectSaved, signedIn, wordsOf } from './render';
import { roleAtLeast } from './roles';

// Which brands each operator sees and decides (docs/brands.md, "Operators and their brands"): what
// every page filters by, and the admins' page that grants and revokes them. An admin sees every
// brand; anyone else the deposits and withdrawals of their brands, and what every brand shares
// (people, onboardings). Another brand's flow is answered as an unknown one, never as forbidden.

const PAGE = '/backoffice/operators';

/** The brands the signed-in operator sees (session.ts reads them on every request). */
export function grantedOf(res: Response): GrantedBrands {
  const g = res.locals.granted as GrantedBrands | undefined;
  if (!g) throw new Error('a page behind sign-in rendered without the operator’s brands');
  return g;
}

/** A brand as a filter takes it: an id, or nothing for all of the operator's. */
export const brandFilterSchema = optional(
  z.string({ error: say('invalid') }).regex(BRAND_ID_PATTERN, say('invalid')),
);

/**
 * The brands a page lists, as the SQL filters take them (null: every brand): the operator's,
 * narrowed to the one they chose; a brand not theirs lists nothing, as one that does not exist.
 */
export function brandsFor(res: Response, chosen?: string): string[] | null {
  const g = grantedOf(res);
  if (!chosen) return brandsParam(g);
  return g === 'all' || g.includes(chosen) ? [chosen] : [];
}

/** The brand ids the operator may choose among: every brand for an admin. */
export async function brandChoicesOf(pool: Pool, res: Response): Promise<string[]> {
  const g = grantedOf(res);
  return g === 'all' ? (await listBrands(pool)).map((b) => b.id) : [...g];
}

/**
 * The brand a flow's workflow id names: the part before its first `:` (contracts/flow.ts
 * brandScopedId), the default brand's when there is none.
 */
export function brandOfWorkflowId(id: string): string {
  const at = id.indexOf(':');
  return at > 0 ? id.slice(0, at) : DEFAULT_BRAND;
}

/** A flow the operator's brands do not reach is the 404 of an unknown one: nothing is said of it. */
export function mustSeeFlow<F extends { type: string; brandId: string }>(
  res: Response,
  flow: F | undefined,
): F | undefined {
  return flow && maySeeFlow(grantedOf(res), flow) ? flow : undefined;
}

const grantFormSchema = z.object({
  email: z.email({ error: say('invalid') }).max(200, say('atMost', 200)),
  brand: z.string({ error: say('invalid') }).regex(BRAND_ID_PATTERN, say('invalid')),
});

const auditOf = (operator: Operator) => ({
  operatorId: operator.id,
  operatorEmail: operator.email,
  operatorRole: operator.role,
});

export function operatorRoutes({ pool }: BackofficeDeps) {
  const r = Router();
  r.get('/operators', async (req, res) => {
    const operator = signedIn(res);
    if (!roleAtLeast(operator.role, 'admin'))
      throw new BackofficeError(403, (t) => ({
        heading: t.errors.notAllowed,
        message: t.grants.mayNotSee(labelsFor(t.lang).role(operator.role)),
      }));
    const [operators, brands] = await Promise.all([listOperatorGrants(pool), listBrands(pool)]);
    page(req, res, 'operators', { operators, brands: brands.map((b) => b.id) });
  });
  for (const grant of [true, false]) {
    r.post(`/operators/${grant ? 'grant' : 'revoke'}`, async (req, res) => {
      const operator = signedIn(res);
      const t = wordsOf(req, res);
      const action = grant ? 'operator.brand.grant' : 'operator.brand.revoke';
      if (!roleAtLeast(operator.role, 'admin')) {
        await recordAction(pool, { ...auditOf(operator), action, outcome: 'refused', caseType: 'operator' });
        throw new BackofficeError(
          403,
          (w) => ({
            heading: w.errors.notAllowed,
            message: w.grants.mayNotSee(labelsFor(w.lang).role(operator.role)),
          }),
          [],
          '/backoffice',
        );
      }
      const form = parseForm(grantFormSchema, req.body, PAGE, t, {
        fieldName: (name) =>
          name === 'brand' ? t.grants.brand : name === 'email' ? t.grants.email : undefined,
      });
      try {
        const { changed } = await changeGrant(pool, auditOf(operator), { ...form, grant });
        req.session.flash = {
          kind: 'ok',
          text: !changed
            ? t.grants.unchanged(form.brand, form.email)
            : grant
              ? t.grants.granted(form.brand, form.email)
              : t.grants.revoked(form.brand, form.email),
        };
      } catch (err) {
        if (err instanceof GrantTargetNotFound)
          throw notFoundPage((w) => (err.what === 'operator' ? w.grants.noOperator : w.grants.noBrand));
        throw err;
      }
      await redirectSaved(req, res, PAGE);
    });
  }
  return r;
}
