import { Router } from 'express';
import { brandOf, callerOf } from '../api-keys/authenticate';
import { getEvent, listEvents } from '../db/events';
import type { Pool } from '../db/pool';
import { redeliverEvent } from '../db/webhook-deliveries';
import { type Operation, route } from '../http/operation';
import { Problem } from '../http/problem';
import { parse } from '../http/request-input';
import {
  eventPageSchema,
  eventParamsSchema,
  eventsQuerySchema,
  eventViewSchema,
  redeliverQuerySchema,
  redeliverySchema,
} from './event-schemas';

// The pull API: every event kept (30 days by default), oldest first, from a cursor. A backend
// that was down pages from its last cursor and misses nothing, webhooks or not.

const notFound = (id: string) => new Problem(404, 'event-not-found', 'Event not found', `no event ${id}`);

// The cursor is the last event's position, in the order events committed in.
const encodeCursor = (position: number) => String(position);

/** The event as the API shows it: the webhook's body with its id. */
const eventView = ({ position: _position, ...e }: Awaited<ReturnType<typeof listEvents>>[number]) => e;

/** The events routes, as /openapi.json describes them and in its order. */
export const eventOperations = {
  list: {
    operationId: 'listEvents',
    method: 'get',
    path: '/events',
    tag: 'Events',
    summary: 'Events, oldest first, from a cursor: catch up without webhooks (kept 30 days)',
    query: eventsQuerySchema,
    ok: [{ status: 200, description: 'A page of events', schema: eventPageSchema }],
    scopes: ['events:read'],
  },
  get: {
    operationId: 'getEvent',
    method: 'get',
    path: '/events/:id',
    tag: 'Events',
    summary: 'One event',
    params: eventParamsSchema,
    ok: [{ status: 200, description: 'Event', schema: eventViewSchema }],
    scopes: ['events:read'],
  },
  redeliver: {
    operationId: 'redeliverEvent',
    method: 'post',
    path: '/events/:id/redeliver',
    tag: 'Events',
    summary: "Send an event again to this key's subscribed endpoints, with the same webhook-id",
    params: eventParamsSchema,
    query: redeliverQuerySchema,
    ok: [{ status: 202, description: 'Queued', schema: redeliverySchema }],
    scopes: ['events:write'],
  },
} satisfies Record<string, Operation>;

export function eventRoutes({ pool }: { pool: Pool }) {
  const r = Router();
  route(r, eventOperations.list, async (req, res) => {
    const q = parse(eventsQuerySchema, 'query', req.query);
    const after = q.after === undefined ? 0 : Number(q.after);
    const rows = await listEvents(pool, {
      after,
      types: q.type,
      flowId: q.flow,
      owner: callerOf(res),
      brand: brandOf(res),
      limit: q.limit + 1,
    });
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    res.json({
      items: items.map(eventView),
      next: encodeCursor(last ? last.position : after),
      hasMore: rows.length > q.limit,
    });
  });

  route(r, eventOperations.get, async (req, res) => {
    const { id } = parse(eventParamsSchema, 'path', req.params);
    const e = await getEvent(pool, id, callerOf(res), brandOf(res));
    if (!e) throw notFound(id);
    res.json(eventView(e));
  });

  route(r, eventOperations.redeliver, async (req, res) => {
    const { id } = parse(eventParamsSchema, 'path', req.params);
    const { endpoint } = parse(redeliverQuerySchema, 'query', req.query);
    const endpoints = await redeliverEvent(pool, id, callerOf(res), brandOf(res), endpoint);
    if (!endpoints) throw notFound(id);
    res.status(202).json({ eventId: id, endpoints });
  });
  return r;
}
