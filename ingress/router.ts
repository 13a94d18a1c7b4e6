import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../common/logger';
import type { ApiMetrics } from '../common/metrics';
import { DEFAULT_BRAND } from '../contracts/flow';
import { raiseUnclassifiedAnswer } from '../db/alerts';
import { claimForDelivery, type NotificationPoint, type Stored } from '../db/inbox';
import type { Pool } from '../db/pool';
import { failedAuthLimit } from '../http/failed-auth';
import { Problem, sendProblem } from '../http/problem';
import { accountOf, ingressAuth } from './authenticate';
import { ingressAccounts } from './brand-accounts';
import {
  announcesOwnRequest,
  type DeliveryContext,
  type DeliveryOptions,
  deliverRow,
  deliveryOptionsFrom,
  leaseMs,
  OWN_REQUEST_NOTE,
  UNMATCHED_LOG,
} from './deliver';
import { NOTIFICATION_POINTS, type ParsedNotification } from './notification';
import { parseBody, parseStorable } from './parse';
import { headersOfInterest, keepNotification, storeNotification } from './store';

// POST /webhooks/provider/:secret[/deposit|/withdraw|/liveness]. Authenticated by the secret in
// the URL, which names the brand's account the notification came through (the environment's
// WEBHOOK_SECRET the default brand's), and the body's partner id, which must be that account's;
// stored in the inbox before the 2xx; then signalled, without making the provider wait, to the
// flow of that brand the body names (another brand's flow of the same id is never told). The
// ingress answers its own errors so the secret never appears in a problem's `instance`.

/**
 * Onboardings and biometric identifications are the default brand's (install-wide), asked through
 * its account: a liveness callback through another brand's account names none of that brand's flows.
 */
export const NOT_THE_BRANDS_LIVENESS =
  "not signalled: a liveness callback through another brand's account; onboardings are the default brand's";

export interface IngressDeps {
  config: {
    WEBHOOK_SECRET: string;
    WEBHOOK_PARTNER_ID: string;
    PII_HASH_KEY: string;
    INBOX_RETRY_MAX_MS?: number;
    INBOX_GIVE_UP_MS?: number;
    INBOX_COALESCE_MS?: number;
    INBOX_LIVENESS_REQUEST_WAIT_MS?: number;
    AUTH_FAILURE_LIMIT?: number;
    AUTH_FAILURE_WINDOW_MS?: number;
  };
  pool: Pool;
  temporal: Client;
  log: Logger;
  delivery?: Partial<DeliveryOptions>;
  bodyLimit?: string;
  metrics?: Pick<
    ApiMetrics,
    | 'countNotification'
    | 'countUnmatchedLiveness'
    | 'countAuthFailure'
    | 'countAuthLimited'
    | 'countUnclassified'
  >;
  /** Bound on the one INSERT; past it the provider gets a 503 and retries. */
  storeTimeoutMs?: number;
}

function instanceOf(req: Request): string {
  const point = req.params.point;
  return `/webhooks/provider/***${typeof point === 'string' ? `/${point}` : ''}`;
}

export function ingressRouter(deps: IngressDeps) {
  const delivery: DeliveryOptions = { ...deliveryOptionsFrom(deps.config), ...deps.delivery };
  const ctx: DeliveryContext = {
    pool: deps.pool,
    temporal: deps.temporal,
    options: delivery,
    metrics: deps.metrics,
  };
  const store = {
    leaseMs: leaseMs(delivery),
    timeoutMs: deps.storeTimeoutMs ?? 5_000,
    coalesceMs: delivery.coalesceMs,
  };
  // Wrong secrets (and partner ids) are limited per address however many paths they try.
  const failures = failedAuthLimit({
    surface: 'ingress',
    limit: deps.config.AUTH_FAILURE_LIMIT,
    windowMs: deps.config.AUTH_FAILURE_WINDOW_MS,
    metrics: deps.metrics,
  });
  const accounts = ingressAccounts({
    pool: deps.pool,
    connector: 'identity-payments',
    hashKey: deps.config.PII_HASH_KEY,
    environment: { secret: deps.config.WEBHOOK_SECRET, partnerId: deps.config.WEBHOOK_PARTNER_ID },
  });
  const auth = ingressAuth(accounts, failures);
  const { log } = deps;

  const receive = async (req: Request, res: Response, next: NextFunction) => {
    const receivedAt = new Date();
    const raw = typeof req.body === 'string' ? req.body : '';
    const fields = parseBody(raw);
    const account = accountOf(res);
    const refusal = auth.checkPartner(fields, account);
    if (refusal) return failures.fail(req, res, next, refusal);
    const pathPoint = req.params.point as NotificationPoint | undefined;
    const n = parseStorable(raw, fields, pathPoint, receivedAt, deps.config.PII_HASH_KEY, account.brand);
    const got = { rawBody: raw, headers: headersOfInterest(req), receivedAt };
    const unavailable = (err: unknown): never => {
      log.error({ err: String(err), point: n.point }, 'webhook inbox unavailable; answering 503');
      res.set('retry-after', '5');
      throw new Problem(503, 'inbox-unavailable', 'Cannot store the notification now; retry later');
    };
    // The flow's own request announced back, or a liveness callback through another brand's
    // account: kept, nothing to signal, done in one statement.
    const keepOnly = announcesOwnRequest(n)
      ? OWN_REQUEST_NOTE
      : n.point === 'liveness' && account.brand !== DEFAULT_BRAND
        ? NOT_THE_BRANDS_LIVENESS
        : undefined;
    const stored = keepOnly
      ? await keepNotification(deps.pool, n, got, store, keepOnly).then(
          (id): Stored => ({ id, deliverNow: false }),
          unavailable,
        )
      : await storeNotification(deps.pool, n, got, store).catch(unavailable);
    const duplicate = 'joined' in stored;
    const outcome = duplicate ? 'duplicate' : 'stored';
    deps.metrics?.countNotification(n.point, String(fields.type ?? n.point), outcome);
    res.status(200).json({ received: true, duplicate });
    log.info(
      { point: n.point, target: n.logTarget, duplicate, brand: account.brand },
      'provider notification stored',
    );
    if (n.unclassified && !duplicate) tellUnclassified(deps, log, n);
    // A copy that joined a waiting row, or whose window holds it, is the relay's to signal.
    if (duplicate || !stored.deliverNow) return;
    signalNow(ctx, log, stored.id, n, receivedAt);
  };

  const router = express.Router();
  // Any content type: the provider's is not documented, and the raw text is what we store.
  const rawBody = express.text({ type: () => true, limit: deps.bodyLimit ?? '16kb' });
  const paths = ['/webhooks/provider/:secret', '/webhooks/provider/:secret/:point'];
  router.post(paths, failures.refuseWhileLimited, auth.checkUrl, rawBody, receive);
  router.use(ingressErrors(deps));
  return router;
}

/**
 * A callback whose status no rule reads: kept as progress that decides nothing, and told (the
 * metric, a log line naming the field, the flow's alert) after the provider has its answer.
 */
function tellUnclassified(deps: IngressDeps, log: Logger, n: ParsedNotification) {
  const { op, field } = n.unclassified ?? { op: '', field: '' };
  deps.metrics?.countUnclassified(op);
  log.warn({ target: n.logTarget, op, field }, 'provider answer pixflow cannot read: the flow keeps waiting');
  raiseUnclassifiedAnswer(deps.pool, {
    id: `alr_${randomBytes(16).toString('hex')}`,
    workflowId: n.workflowId,
    op,
    field,
  }).catch((err) =>
    log.warn({ err: String(err), target: n.logTarget }, 'unclassified answer alert not raised'),
  );
}

/** The fast path, after the answer: the relay picks the row up if this fails or the process dies. */
function signalNow(ctx: DeliveryContext, log: Logger, id: number, n: ParsedNotification, receivedAt: Date) {
  const { point, workflowId, signalName, signalPayload, logTarget } = n;
  claimForDelivery(ctx.pool, id)
    .then((mine) =>
      mine
        ? deliverRow(ctx, { id, point, workflowId, signalName, signalPayload, receivedAt, attempts: 0 })
        : 'claimed elsewhere',
    )
    .then(
      (outcome) =>
        outcome === 'unmatched'
          ? log.warn({ point, target: logTarget, outcome }, UNMATCHED_LOG)
          : log.debug({ point, target: logTarget, outcome }, 'notification delivery'),
      (err) => log.warn({ err: String(err), target: logTarget }, 'notification delivery not recorded'),
    );
}

/** Every refusal as problem+json without the secret, counted by point and status. */
function ingressErrors(deps: Pick<IngressDeps, 'log' | 'metrics'>) {
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const status = err instanceof Problem ? err.status : ((err as { status?: number }).status ?? 500);
    // Router-level handlers see no route params: the point is the path's last segment, if any.
    const last = req.path.split('/')[4];
    const point = NOTIFICATION_POINTS.includes(last as NotificationPoint) ? (last as string) : 'any';
    deps.metrics?.countNotification(point, 'unknown', `rejected_${status}`);
    if (err instanceof Problem) return sendProblem(res, err, instanceOf(req));
    const e = err as { type?: string; statusCode?: number };
    if (e.type === 'entity.too.large') {
      return sendProblem(res, new Problem(413, 'body-too-large', 'Request body too large'), instanceOf(req));
    }
    if (status >= 400 && status < 500) {
      return sendProblem(res, new Problem(status, 'bad-request', 'Bad request', e.type), instanceOf(req));
    }
    deps.log.error({ err: String(err) }, 'webhook ingress error');
    sendProblem(res, new Problem(500, 'internal', 'Internal error'), instanceOf(req));
  };
}
