import { createHash, timingSafeEqual } from 'node:crypto';
import type { Client } from '@temporalio/client';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { Logger } from '../../common/logger';
import type { ApiMetrics } from '../../common/metrics';
import { type InboxPoint, insertInbox } from '../../db/inbox';
import type { Pool } from '../../db/pool';
import { Problem, sendProblem } from '../problem';
import { illFormedTextPath } from '../route-helpers';
import { type DeliveryOptions, deliverRow, deliveryOptionsFrom, leaseMs } from './deliver';
import { POINTS, parseNotification } from './notification';

// POST /webhooks/provider/:secret[/deposit|/withdraw|/liveness]. Authenticated by the secret in
// the URL and the body's partner_id; stored in the inbox before the 2xx; then signalled without
// making the provider wait. The ingress answers its own errors so the secret never appears in
// a problem's `instance`.

export interface IngressDeps {
  config: {
    WEBHOOK_SECRET: string;
    WEBHOOK_PARTNER_ID: string;
    PII_HASH_KEY: string;
    INBOX_RETRY_MAX_MS?: number;
    INBOX_GIVE_UP_MS?: number;
  };
  pool: Pool;
  temporal: Client;
  log: Logger;
  delivery?: Partial<DeliveryOptions>;
  bodyLimit?: string;
  metrics?: Pick<ApiMetrics, 'countNotification'>;
  /** Bound on the one INSERT; past it the provider gets a 503 and retries. */
  storeTimeoutMs?: number;
}

const HEADERS_OF_INTEREST = ['content-type', 'user-agent', 'x-request-id'];

const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
/** Constant time over equal-length digests, whatever the lengths of the inputs. */
const sameSecret = (given: string, expected: Buffer) => timingSafeEqual(digest(given), expected);

function instanceOf(req: Request): string {
  const point = req.params.point;
  return `/webhooks/provider/***${typeof point === 'string' ? `/${point}` : ''}`;
}

function timeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`inbox insert timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

export function ingressRouter(deps: IngressDeps) {
  const { pool, temporal, log } = deps;
  const delivery: DeliveryOptions = { ...deliveryOptionsFrom(deps.config), ...deps.delivery };
  const secretDigest = digest(deps.config.WEBHOOK_SECRET);
  const partnerDigest = digest(deps.config.WEBHOOK_PARTNER_ID);
  const storeTimeoutMs = deps.storeTimeoutMs ?? 5_000;
  const router = express.Router();

  const checkSecret: RequestHandler = (req, _res, next) => {
    // Before the body is read: an unauthenticated caller costs us nothing more.
    if (!sameSecret(String(req.params.secret ?? ''), secretDigest)) {
      return next(new Problem(401, 'unauthorized', 'Unauthorized'));
    }
    const point = req.params.point;
    if (point !== undefined && !POINTS.includes(point as InboxPoint)) {
      return next(
        new Problem(404, 'not-found', 'Not found', `no notification point ${JSON.stringify(point)}`),
      );
    }
    next();
  };
  // Any content type: the provider's is not documented, and the raw text is what we store.
  const rawBody = express.text({ type: () => true, limit: deps.bodyLimit ?? '16kb' });

  const receive = async (req: Request, res: Response, next: NextFunction) => {
    const receivedAt = new Date();
    const raw = typeof req.body === 'string' ? req.body : '';
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      return next(new Problem(400, 'malformed-json', 'Malformed JSON body', 'the body is not JSON'));
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return next(
        new Problem(400, 'malformed-json', 'Malformed JSON body', 'the body must be a JSON object'),
      );
    }
    const fields = body as Record<string, unknown>;
    const partner = typeof fields.partner_id === 'string' ? fields.partner_id : '';
    if (!sameSecret(partner, partnerDigest)) return next(new Problem(401, 'unauthorized', 'Unauthorized'));
    // Postgres text and jsonb refuse NUL and lone surrogates: such a body could never be stored,
    // and a 503 would have the provider retry it forever.
    const bad = raw.includes('\u0000') ? [] : illFormedTextPath(fields);
    if (bad) {
      const name = ['body', ...bad].join('.');
      return next(
        new Problem(
          400,
          'validation-error',
          'Request validation failed',
          `${name}: must be well-formed text without NUL characters`,
        ),
      );
    }

    let n: ReturnType<typeof parseNotification>;
    try {
      n = parseNotification(
        req.params.point as InboxPoint | undefined,
        fields,
        receivedAt,
        deps.config.PII_HASH_KEY,
      );
    } catch (err) {
      return next(err);
    }

    const headers: Record<string, string> = {};
    for (const h of HEADERS_OF_INTEREST) {
      const v = req.header(h);
      if (v !== undefined) headers[h] = v.slice(0, 500);
    }
    let id: number | undefined;
    try {
      id = await timeout(
        insertInbox(pool, {
          dedupeKey: n.dedupeKey,
          point: n.point,
          workflowId: n.workflowId,
          rawBody: raw,
          headers,
          receivedAt,
          signalName: n.signalName,
          signalPayload: n.signalPayload,
          nextAttemptAt: new Date(receivedAt.getTime() + leaseMs(delivery)),
        }),
        storeTimeoutMs,
      );
    } catch (err) {
      log.error({ err: String(err), point: n.point }, 'webhook inbox unavailable; answering 503');
      res.set('retry-after', '5');
      return next(new Problem(503, 'inbox-unavailable', 'Cannot store the notification now; retry later'));
    }
    const duplicate = id === undefined;
    deps.metrics?.countNotification(
      n.point,
      String(fields.type ?? n.point),
      duplicate ? 'duplicate' : 'stored',
    );
    res.status(200).json({ received: true, duplicate });
    log.info({ point: n.point, target: n.logTarget, duplicate }, 'provider notification stored');
    if (id === undefined) return; // the first copy's delivery (or the relay) takes care of it

    // Fast path, after the answer: the relay picks the row up if this fails or the process dies.
    deliverRow(
      { pool, temporal, options: delivery },
      {
        id,
        point: n.point,
        workflowId: n.workflowId,
        signalName: n.signalName,
        signalPayload: n.signalPayload,
        receivedAt,
        attempts: 0,
      },
    ).then(
      (outcome) => log.debug({ point: n.point, target: n.logTarget, outcome }, 'notification delivery'),
      (err) => log.warn({ err: String(err), target: n.logTarget }, 'notification delivery not recorded'),
    );
  };

  const paths = ['/webhooks/provider/:secret', '/webhooks/provider/:secret/:point'];
  router.post(paths, checkSecret, rawBody, receive);

  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = err instanceof Problem ? err.status : ((err as { status?: number }).status ?? 500);
    // Router-level handlers see no route params: the point is the path's last segment, if any.
    const last = req.path.split('/')[4];
    const point = POINTS.includes(last as InboxPoint) ? (last as string) : 'any';
    deps.metrics?.countNotification(point, 'unknown', `rejected_${status}`);
    if (err instanceof Problem) return sendProblem(res, err, instanceOf(req));
    const e = err as { type?: string; statusCode?: number };
    if (e.type === 'entity.too.large') {
      return sendProblem(res, new Problem(413, 'body-too-large', 'Request body too large'), instanceOf(req));
    }
    if (status >= 400 && status < 500) {
      return sendProblem(res, new Problem(status, 'bad-request', 'Bad request', e.type), instanceOf(req));
    }
    log.error({ err: String(err) }, 'webhook ingress error');
    sendProblem(res, new Problem(500, 'internal', 'Internal error'), instanceOf(req));
  });
  return router;
}
