import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import { callerOf } from '../api-keys/authenticate';
import type { Config } from '../common/config';
import { sealSecret } from '../common/secret-box';
import { webhookUrlProblem } from '../common/url-safety';
import type { Pool } from '../db/pool';
import {
  createEndpoint,
  deleteEndpoint,
  type EndpointRow,
  getEndpoint,
  listAttempts,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
} from '../db/webhook-endpoints';
import { Problem } from '../http/problem';
import { parse } from '../http/request-input';
import {
  attemptsQuerySchema,
  endpointCreateSchema,
  endpointParamsSchema,
  endpointUpdateSchema,
} from './event-schemas';
import { urlPolicyOf } from './outbox-relay';

// Webhook endpoints: where a backend wants its events pushed. Each belongs to the API key that
// created it; another key's endpoint answers 404, as one that does not exist.

const notFound = (id: string) =>
  new Problem(404, 'webhook-endpoint-not-found', 'Webhook endpoint not found', `no webhook endpoint ${id}`);

/** The endpoint as the API shows it: never a secret, sealed or not. */
function endpointView(e: EndpointRow) {
  return {
    id: e.id,
    url: e.url,
    description: e.description,
    events: e.events,
    enabled: e.enabled,
    disabledReason: e.disabledReason as 'gone' | 'failing' | null,
    disabledAt: e.disabledAt,
    failingSince: e.failingSince,
    previousSecretUntil: e.previousSecretUntil,
    createdAt: e.createdAt,
    updatedAt: e.updatedAt,
  };
}

/** A new signing secret in the Standard Webhooks form: whsec_ and 24 random bytes in base64. */
const newSecret = () => `whsec_${randomBytes(24).toString('base64')}`;

export function webhookEndpointRoutes({ config, pool }: { config: Config; pool: Pool }) {
  const r = Router();
  const policy = urlPolicyOf(config);
  /** 400 naming body.url when webhooks may not go there. */
  const checkUrl = (url: string | undefined) => {
    const problem = url === undefined ? undefined : webhookUrlProblem(url, policy);
    if (!problem) return;
    throw new Problem(400, 'validation-error', 'Request validation failed', `body.url: ${problem}`, {
      invalid_params: [{ name: 'body.url', reason: problem }],
    });
  };
  const found = async (id: string, owner: string) => {
    const e = await getEndpoint(pool, id, owner);
    if (!e) throw notFound(id);
    return e;
  };

  r.post('/webhook-endpoints', async (req, res) => {
    const body = parse(endpointCreateSchema, 'body', req.body);
    checkUrl(body.url);
    const secret = newSecret();
    const e = await createEndpoint(pool, {
      id: `we_${randomBytes(12).toString('hex')}`,
      owner: callerOf(res),
      url: body.url,
      description: body.description,
      events: body.events,
      secret: sealSecret(config.codecKeys, secret),
    });
    res
      .status(201)
      .location(`/v1/webhook-endpoints/${e.id}`)
      .json({ ...endpointView(e), secret });
  });

  r.get('/webhook-endpoints', async (_req, res) => {
    res.json({ items: (await listEndpoints(pool, callerOf(res))).map(endpointView) });
  });

  r.get('/webhook-endpoints/:id', async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    res.json(endpointView(await found(id, callerOf(res))));
  });

  r.patch('/webhook-endpoints/:id', async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    const change = parse(endpointUpdateSchema, 'body', req.body);
    checkUrl(change.url);
    const e = await updateEndpoint(pool, id, callerOf(res), change);
    if (!e) throw notFound(id);
    res.json(endpointView(e));
  });

  r.delete('/webhook-endpoints/:id', async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    if (!(await deleteEndpoint(pool, id, callerOf(res)))) throw notFound(id);
    res.status(204).end();
  });

  r.post('/webhook-endpoints/:id/rotate-secret', async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    const secret = newSecret();
    const sealed = sealSecret(config.codecKeys, secret);
    const e = await rotateEndpointSecret(pool, id, callerOf(res), sealed, config.WEBHOOK_SECRET_OVERLAP_MS);
    if (!e) throw notFound(id);
    res.json({ ...endpointView(e), secret });
  });

  r.get('/webhook-endpoints/:id/attempts', async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    const q = parse(attemptsQuerySchema, 'query', req.query);
    await found(id, callerOf(res));
    const rows = await listAttempts(pool, id, {
      before: q.cursor === undefined ? undefined : Number(q.cursor),
      eventId: q.event,
      limit: q.limit + 1,
    });
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    res.json({ items, next: rows.length > q.limit && last ? String(last.id) : null });
  });
  return r;
}
