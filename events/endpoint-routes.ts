import { randomBytes } from 'node:crypto';
import { type Response, Router } from 'express';
import { brandOf, callerOf } from '../api-keys/authenticate';
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
import { type Operation, route } from '../http/operation';
import { Problem } from '../http/problem';
import { parse } from '../http/request-input';
import {
  attemptPageSchema,
  attemptsQuerySchema,
  endpointCreateSchema,
  endpointListSchema,
  endpointParamsSchema,
  endpointSchema,
  endpointUpdateSchema,
  endpointWithSecretSchema,
} from './event-schemas';
import { urlPolicyOf } from './outbox-relay';

// Webhook endpoints: where a backend wants its events pushed. Each belongs to the API key that
// created it and to the brand it acted for, and receives that brand's events only; another key's
// or another brand's endpoint answers 404, as one that does not exist.

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

/** The webhook endpoint routes, as /openapi.json describes them and in its order. */
export const endpointOperations = {
  create: {
    operationId: 'createWebhookEndpoint',
    method: 'post',
    path: '/webhook-endpoints',
    tag: 'Events',
    summary: 'Subscribe an endpoint to events; its signing secret is shown this once',
    description:
      'Deliveries follow Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The URL must be https to a public address (loopback only when WEBHOOK_ALLOW_LOOPBACK; private ranges only in WEBHOOK_ALLOWED_CIDRS).',
    body: endpointCreateSchema,
    ok: [{ status: 201, description: 'Created', schema: endpointWithSecretSchema }],
    // An endpoint receives the events it subscribes to: subscribing reads them.
    scopes: ['webhooks:write', 'events:read'],
  },
  list: {
    operationId: 'listWebhookEndpoints',
    method: 'get',
    path: '/webhook-endpoints',
    tag: 'Events',
    summary: "This API key's endpoints",
    ok: [{ status: 200, description: 'Endpoints', schema: endpointListSchema }],
    scopes: ['webhooks:read'],
  },
  get: {
    operationId: 'getWebhookEndpoint',
    method: 'get',
    path: '/webhook-endpoints/:id',
    tag: 'Events',
    summary: 'One endpoint (another key’s is 404)',
    params: endpointParamsSchema,
    ok: [{ status: 200, description: 'Endpoint', schema: endpointSchema }],
    scopes: ['webhooks:read'],
  },
  update: {
    operationId: 'updateWebhookEndpoint',
    method: 'patch',
    path: '/webhook-endpoints/:id',
    tag: 'Events',
    summary: 'Change its URL, events or description; enable or disable it',
    params: endpointParamsSchema,
    body: endpointUpdateSchema,
    ok: [{ status: 200, description: 'Changed', schema: endpointSchema }],
    scopes: ['webhooks:write', 'events:read'],
  },
  remove: {
    operationId: 'deleteWebhookEndpoint',
    method: 'delete',
    path: '/webhook-endpoints/:id',
    tag: 'Events',
    summary: 'Delete an endpoint and its pending deliveries',
    params: endpointParamsSchema,
    ok: [{ status: 204, description: 'Deleted' }],
    scopes: ['webhooks:write'],
  },
  rotateSecret: {
    operationId: 'rotateWebhookEndpointSecret',
    method: 'post',
    path: '/webhook-endpoints/:id/rotate-secret',
    tag: 'Events',
    summary: 'A new signing secret; the previous one keeps signing beside it for 24 hours',
    params: endpointParamsSchema,
    ok: [
      {
        status: 200,
        description: 'Rotated; the new secret is shown this once',
        schema: endpointWithSecretSchema,
      },
    ],
    scopes: ['webhooks:write'],
  },
  attempts: {
    operationId: 'listWebhookEndpointAttempts',
    method: 'get',
    path: '/webhook-endpoints/:id/attempts',
    tag: 'Events',
    summary: 'Every delivery attempt to the endpoint, newest first',
    params: endpointParamsSchema,
    query: attemptsQuerySchema,
    ok: [{ status: 200, description: 'Attempts', schema: attemptPageSchema }],
    scopes: ['webhooks:read'],
  },
} satisfies Record<string, Operation>;

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
  /** The caller's endpoint of its acting brand; another key's or brand's is the 404 of an unknown id. */
  const ownedEndpoint = async (id: string, res: Response) => {
    const e = await getEndpoint(pool, id, callerOf(res), brandOf(res));
    if (!e) throw notFound(id);
    return e;
  };

  route(r, endpointOperations.create, async (req, res) => {
    const body = parse(endpointCreateSchema, 'body', req.body);
    checkUrl(body.url);
    const secret = newSecret();
    const e = await createEndpoint(pool, {
      id: `we_${randomBytes(12).toString('hex')}`,
      owner: callerOf(res),
      brand: brandOf(res),
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

  route(r, endpointOperations.list, async (_req, res) => {
    res.json({ items: (await listEndpoints(pool, callerOf(res), brandOf(res))).map(endpointView) });
  });

  route(r, endpointOperations.get, async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    res.json(endpointView(await ownedEndpoint(id, res)));
  });

  route(r, endpointOperations.update, async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    const change = parse(endpointUpdateSchema, 'body', req.body);
    checkUrl(change.url);
    const e = await updateEndpoint(pool, id, callerOf(res), brandOf(res), change);
    if (!e) throw notFound(id);
    res.json(endpointView(e));
  });

  route(r, endpointOperations.remove, async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    if (!(await deleteEndpoint(pool, id, callerOf(res), brandOf(res)))) throw notFound(id);
    res.status(204).end();
  });

  route(r, endpointOperations.rotateSecret, async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    const secret = newSecret();
    const sealed = sealSecret(config.codecKeys, secret);
    const e = await rotateEndpointSecret(
      pool,
      id,
      callerOf(res),
      brandOf(res),
      sealed,
      config.WEBHOOK_SECRET_OVERLAP_MS,
    );
    if (!e) throw notFound(id);
    res.json({ ...endpointView(e), secret });
  });

  route(r, endpointOperations.attempts, async (req, res) => {
    const { id } = parse(endpointParamsSchema, 'path', req.params);
    const q = parse(attemptsQuerySchema, 'query', req.query);
    await ownedEndpoint(id, res);
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
