import { type Request, type Response, Router } from 'express';
import { z } from 'zod';
import { createKey, type KeyActor, listKeys, revokeKey, rotateKey, statusOf } from '../api-keys/admin';
import { durationSchema, keyIdSchema, keyNameSchema, type Scope, scopeResources } from '../common/api-key';
import { recordAction } from '../db/operator-actions';
import type { Operator } from '../db/operators';
import type { BackofficeDeps } from './deps';
import { parseForm } from './forms';
import { BackofficeError, notFoundPage, page, redirectSaved, signedIn } from './render';
import { roleAtLeast } from './session';

// API keys: every operator sees them (name, prefix, scopes, use, never a secret); an admin
// creates, rotates and revokes them. A new secret is shown once, on the answer to the form that
// made it, and kept nowhere (not in the session either). Every action, refused ones too, is in
// the audit trail. The API applies a change within API_KEY_CACHE_MS, without a restart.

const PAGE = '/backoffice/api-keys';

const level = z.enum(['', 'read', 'write'], { error: 'must be none, read or write' }).default('');
const expiryChoices = ['', '30d', '90d', '365d'] as const;
const overlapChoices = ['', '1h', '24h'] as const;

const createFormSchema = z
  .object({
    name: keyNameSchema,
    expires: z.enum(expiryChoices, { error: 'must be never, 30, 90 or 365 days' }).default(''),
    ...Object.fromEntries(scopeResources.map((r) => [`scope_${r}`, level])),
  })
  .transform((form, ctx) => {
    const fields = form as Record<string, string>;
    const scopes = scopeResources.flatMap((r) =>
      fields[`scope_${r}`] ? [`${r}:${fields[`scope_${r}`]}` as Scope] : [],
    );
    if (scopes.length === 0) {
      ctx.addIssue({ code: 'custom', path: ['scopes'], message: 'give the key at least one scope' });
      return z.NEVER;
    }
    const expires = form.expires ? durationSchema.parse(form.expires) : undefined;
    return { name: form.name, scopes, expiresAt: expires ? new Date(Date.now() + expires) : null };
  });

const rotateFormSchema = z.object({
  overlap: z.enum(overlapChoices, { error: 'must be none, 1 hour or 24 hours' }).default(''),
});

const actorOf = (o: Operator): KeyActor => ({
  operatorId: o.id,
  operatorEmail: o.email,
  operatorRole: o.role,
});

/** Only an admin changes keys: anyone else is refused, and the refusal audited. */
async function adminOnly({ pool }: BackofficeDeps, operator: Operator, action: string, caseId?: string) {
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
    'Not allowed',
    `Your role (${operator.role}) may look at API keys but not change them.`,
    [],
    PAGE,
  );
}

function keyIdOf(req: Request): string {
  const id = keyIdSchema.safeParse(req.params.id);
  if (!id.success) throw notFoundPage('API key with this id');
  return id.data;
}

/** The page that shows a secret, this once. */
function showSecret(
  req: Request,
  res: Response,
  what: { heading: string; id: string; secret: string },
  status: number,
) {
  page(req, res, 'api-key-secret', what, status);
}

export function apiKeyRoutes(deps: BackofficeDeps) {
  const { pool } = deps;
  const r = Router();

  r.get('/api-keys', async (req, res) => {
    const operator = signedIn(res);
    const keys = (await listKeys(pool)).reverse().map((k) => ({ ...k, status: statusOf(k) }));
    page(req, res, 'api-keys', {
      keys,
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
    const form = parseForm(createFormSchema, req.body, PAGE);
    const { key, secret } = await createKey(pool, actorOf(operator), form);
    showSecret(req, res, { heading: `API key “${key.name}” created`, id: key.id, secret }, 201);
  });

  r.post('/api-keys/:id/rotate', async (req, res) => {
    const operator = signedIn(res);
    const id = keyIdOf(req);
    await adminOnly(deps, operator, 'api_key.rotate', id);
    const { overlap } = parseForm(rotateFormSchema, req.body, PAGE);
    const rotated = await rotateKey(pool, actorOf(operator), id, overlap ? durationSchema.parse(overlap) : 0);
    if (!rotated)
      throw new BackofficeError(409, 'Not rotated', 'There is no live API key with this id.', [], PAGE);
    showSecret(
      req,
      res,
      { heading: `API key “${rotated.key.name}” rotated`, id, secret: rotated.secret },
      200,
    );
  });

  r.post('/api-keys/:id/revoke', async (req, res) => {
    const operator = signedIn(res);
    const id = keyIdOf(req);
    await adminOnly(deps, operator, 'api_key.revoke', id);
    const revoked = await revokeKey(pool, actorOf(operator), id);
    if (!revoked)
      throw new BackofficeError(409, 'Not revoked', 'This API key was revoked already.', [], PAGE);
    req.session.flash = {
      kind: 'ok',
      text: `Revoked “${revoked.name}” (${id}); the API refuses it within seconds.`,
    };
    await redirectSaved(req, res, PAGE);
  });

  return r;
}
