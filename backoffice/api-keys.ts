import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { createKey, type KeyActor, listKeys, revokeKey, rotateKey, statusOf } from '../api-keys/admin';
import { durationSchema, keyIdSchema, keyNameSchema, type Scope, scopeResources } from '../common/api-key';
import { DEFAULT_BRAND_ID } from '../contracts/brand';
import { listBrands } from '../db/brands';
import { type OperatorActionName, recordAction } from '../db/operator-actions';
import type { GrantedBrands } from '../db/operator-brands';
import type { Operator } from '../db/operators';
import type { BackofficeDeps } from './deps';
import { parseForm, say } from './forms';
import { labelsFor } from './i18n';
import { grantedOf } from './operators';
import { BackofficeError, notFoundPage, page, redirectSaved, signedIn, wordsOf } from './render';
import { roleAtLeast } from './roles';

// API keys: every operator sees them (name, prefix, scopes, use, never a secret); an admin
// creates, rotates and revokes them. A new secret is shown once, on the answer to the form that
// made it, and kept nowhere (not in the session either). Every action, refused ones too, is in
// the audit trail. The API applies a change within API_KEY_CACHE_MS, without a restart. A key is
// made for one of the brands (the default brand unless another is chosen), or, by an admin like
// every key, for the platform, which names the brand on each request (docs/brands.md).

const PAGE = '/backoffice/api-keys';

const level = z.enum(['', 'read', 'write'], { error: say('scopeLevel') }).default('');
const expiryChoices = ['', '30d', '90d', '365d'] as const;
const overlapChoices = ['', '1h', '24h'] as const;
/** The brand choice that makes a platform key: no brand id can take this form. */
const PLATFORM = '*platform';

const createFormSchema = (brandIds: readonly string[]) =>
  z
    .object({
      // The rule is the API's (keyNameSchema); the words of its refusals are the page's.
      name: z
        .string({ error: say('required') })
        .trim()
        .min(1, say('required'))
        .max(200, say('atMost', 200))
        .refine((v) => keyNameSchema.safeParse(v).success, say('invalid')),
      expires: z.enum(expiryChoices, { error: say('expiry') }).default(''),
      brand: z
        .string({ error: say('brand') })
        .refine((v) => v === PLATFORM || brandIds.includes(v), say('brand'))
        .default(DEFAULT_BRAND_ID),
      ...Object.fromEntries(scopeResources.map((r) => [`scope_${r}`, level])),
    })
    .transform((form, ctx) => {
      const fields = form as Record<string, string>;
      const scopes = scopeResources.flatMap((r) =>
        fields[`scope_${r}`] ? [`${r}:${fields[`scope_${r}`]}` as Scope] : [],
      );
      if (scopes.length === 0) {
        ctx.addIssue({ code: 'custom', path: ['scopes'], message: say('oneScope') });
        return z.NEVER;
      }
      const expires = form.expires ? durationSchema.parse(form.expires) : undefined;
      return {
        name: form.name,
        scopes,
        brand: form.brand === PLATFORM ? null : form.brand,
        expiresAt: expires ? new Date(Date.now() + expires) : null,
      };
    });

const rotateFormSchema = z.object({
  overlap: z.enum(overlapChoices, { error: say('overlap') }).default(''),
});

const actorOf = (o: Operator): KeyActor => ({
  operatorId: o.id,
  operatorEmail: o.email,
  operatorRole: o.role,
});

/** Only an admin changes keys: anyone else is refused, and the refusal audited. */
async function adminOnly(
  { pool }: BackofficeDeps,
  operator: Operator,
  action: OperatorActionName,
  caseId?: string,
) {
  if (roleAtLeast(operator.role, 'admin')) return;
  await recordAction(pool, {
    ...actorOf(operator),
    action,
    outcome: 'refused',
    caseType: 'api_key',
    caseId,
  });
  throw new BackofficeError(
    403,
    (t) => ({
      heading: t.errors.notAllowed,
      message: t.errors.mayNotChangeKeys(labelsFor(t.lang).role(operator.role)),
    }),
    [],
    PAGE,
  );
}

function keyIdOf(req: Request): string {
  const id = keyIdSchema.safeParse(req.params.id);
  if (!id.success) throw notFoundPage((t) => t.errors.what.apiKey);
  return id.data;
}

/** The page that shows a secret, this once. */
function showSecret(
  req: Request,
  res: Response,
  what: { heading: string; id: string; secret: string; platform: boolean },
  status: number,
) {
  page(req, res, 'api-key-secret', what, status);
}

/** Newest first: a brand's keys are its operators'; a platform key acts for no one brand, and every operator sees it. */
const keysSeenBy = <K extends { brandId: string | null }>(granted: GrantedBrands, keys: K[]) =>
  keys.reverse().filter((k) => granted === 'all' || k.brandId === null || granted.includes(k.brandId));

export function apiKeyRoutes(deps: BackofficeDeps) {
  const { pool } = deps;
  const r = Router();

  r.get('/api-keys', async (req, res) => {
    const operator = signedIn(res);
    const keys = keysSeenBy(grantedOf(res), await listKeys(pool)).map((k) => ({ ...k, status: statusOf(k) }));
    page(req, res, 'api-keys', {
      keys,
      brands: await listBrands(pool),
      defaultBrand: DEFAULT_BRAND_ID,
      platform: PLATFORM,
      mayChange: roleAtLeast(operator.role, 'admin'),
      resources: scopeResources,
      expiryChoices,
      overlapChoices,
      bootstrapCount: deps.config.API_KEYS?.length ?? 0,
    });
  });

  r.post('/api-keys', async (req, res) => {
    const operator = signedIn(res);
    await adminOnly(deps, operator, 'api_key.create');
    const t = wordsOf(req, res);
    const brandIds = (await listBrands(pool)).map((b) => b.id);
    const form = parseForm(createFormSchema(brandIds), req.body, PAGE, t, {
      fieldName: (name) =>
        name.startsWith('scope_')
          ? `${t.keys.scopes}: ${name.slice(6)}`
          : name === 'brand'
            ? t.keys.brand
            : undefined,
    });
    const { key, secret } = await createKey(pool, actorOf(operator), form);
    showSecret(
      req,
      res,
      { heading: t.keys.created_(key.name), id: key.id, secret, platform: key.brandId === null },
      201,
    );
  });

  r.post('/api-keys/:id/rotate', async (req, res) => {
    const operator = signedIn(res);
    const id = keyIdOf(req);
    await adminOnly(deps, operator, 'api_key.rotate', id);
    const t = wordsOf(req, res);
    const { overlap } = parseForm(rotateFormSchema, req.body, PAGE, t);
    const rotated = await rotateKey(pool, actorOf(operator), id, overlap ? durationSchema.parse(overlap) : 0);
    if (!rotated)
      throw new BackofficeError(
        409,
        (w) => ({ heading: w.errors.notRotated, message: w.errors.notRotatedText }),
        [],
        PAGE,
      );
    showSecret(
      req,
      res,
      {
        heading: t.keys.rotated(rotated.key.name),
        id,
        secret: rotated.secret,
        platform: rotated.key.brandId === null,
      },
      200,
    );
  });

  r.post('/api-keys/:id/revoke', async (req, res) => {
    const operator = signedIn(res);
    const id = keyIdOf(req);
    await adminOnly(deps, operator, 'api_key.revoke', id);
    const revoked = await revokeKey(pool, actorOf(operator), id);
    if (!revoked)
      throw new BackofficeError(
        409,
        (w) => ({ heading: w.errors.notRevoked, message: w.errors.notRevokedText }),
        [],
        PAGE,
      );
    req.session.flash = { kind: 'ok', text: wordsOf(req, res).keys.revokedFlash(revoked.name, id) };
    await redirectSaved(req, res, PAGE);
  });

  return r;
}
