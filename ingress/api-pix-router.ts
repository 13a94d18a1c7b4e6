import type { Client } from '@temporalio/client';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../common/logger';
import type { ApiMetrics } from '../common/metrics';
import { claimForDelivery, insertInbox, insertKept, type NewInboxRow, type Stored } from '../db/inbox';
import type { Pool } from '../db/pool';
import { failedAuthLimit } from '../http/failed-auth';
import { Problem, sendProblem } from '../http/problem';
import { withTimeout } from '../http/timeout';
import { type ApiPixClientCas, peerCertificateCheck } from './api-pix-client-cas';
import { type ApiPixRow, apiPixRowsOf, type ReadPixNotifications, readApiPixBody } from './api-pix-reading';
import { accountOf, ingressAccounts, pathSecretCheck } from './brand-accounts';
import {
  type DeliveryContext,
  type DeliveryOptions,
  deliverRow,
  deliveryOptionsFrom,
  leaseMs,
} from './deliver';
import { headersOfInterest } from './store';

// POST /webhooks/api-pix/:secret/pix: the callback of a PSP speaking the Central Bank's API Pix,
// served only on its own mutual TLS listener (ingress/api-pix-listener.ts), so the caller is the
// PSP's certificate before it is anything else. The secret in the path is a second factor, under
// the same failed-authentication limit as the first provider's ingress, and names the brand's
// account the callback came through (API_PIX_WEBHOOK_SECRET the default brand's; a brand's own
// by its keyed hash, ingress/brand-accounts.ts): its Pix are that brand's deposits'. The caller's
// certificate must then be of that account's CA (ingress/api-pix-client-cas.ts; the listener
// gives the CAs, and a router mounted without them checks no certificate). Each Pix is stored in
// the inbox before the 200; then its deposit is told to look (and a closed deposit's reversal
// check is asked, ingress/deliver.ts), without the PSP waiting.

export interface ApiPixIngressDeps {
  config: {
    /** The default brand's path secret; unset, only brands' own API Pix accounts are taken. */
    API_PIX_WEBHOOK_SECRET?: string;
    /** The key of the hashes kept of brands' secrets; unset: the environment's secret alone is taken. */
    PII_HASH_KEY?: string;
    INBOX_RETRY_MAX_MS?: number;
    INBOX_GIVE_UP_MS?: number;
    INBOX_COALESCE_MS?: number;
    TEMPORAL_TASK_QUEUE?: string;
    AUTH_FAILURE_LIMIT?: number;
    AUTH_FAILURE_WINDOW_MS?: number;
  };
  pool: Pool;
  temporal: Client;
  log: Logger;
  /** The API Pix connector's reader of the callback body. */
  read: ReadPixNotifications;
  delivery?: Partial<DeliveryOptions>;
  metrics?: Pick<ApiMetrics, 'countNotification' | 'countAuthFailure' | 'countAuthLimited'>;
  /** Bound on storing the body's rows; past it the PSP gets a 503 and retries. */
  storeTimeoutMs?: number;
}

const POINT = 'api-pix';
const INSTANCE = '/webhooks/api-pix/***/pix';
/**
 * The path's secret, before the body is read: the account it names on the request, or a 401
 * counted against the address. The environment's secret, when set, is the default brand's; a
 * brand's own is found by its keyed hash.
 */
function secretCheck(deps: ApiPixIngressDeps, failures: ReturnType<typeof failedAuthLimit>) {
  const { API_PIX_WEBHOOK_SECRET: secret, PII_HASH_KEY: hashKey } = deps.config;
  const accounts = ingressAccounts({
    pool: deps.pool,
    connector: 'api-pix',
    ...(hashKey === undefined ? {} : { hashKey }),
    ...(secret === undefined ? {} : { environment: { secret } }),
  });
  return pathSecretCheck(accounts, failures);
}

export function apiPixWebhookRouter(deps: ApiPixIngressDeps, clientCas?: ApiPixClientCas) {
  const delivery: DeliveryOptions = { ...deliveryOptionsFrom(deps.config), ...deps.delivery };
  const ctx: DeliveryContext = { pool: deps.pool, temporal: deps.temporal, options: delivery };
  const lease = leaseMs(delivery);
  const timeoutMs = deps.storeTimeoutMs ?? 5_000;
  const failures = failedAuthLimit({
    surface: 'ingress',
    limit: deps.config.AUTH_FAILURE_LIMIT,
    windowMs: deps.config.AUTH_FAILURE_WINDOW_MS,
    metrics: deps.metrics,
  });
  const checkSecret = secretCheck(deps, failures);
  const { log } = deps;

  const receive = async (req: Request, res: Response) => {
    const receivedAt = new Date();
    const raw = typeof req.body === 'string' ? req.body : '';
    const { brand } = accountOf(res);
    const rows = apiPixRowsOf(readApiPixBody(raw, deps.read), receivedAt, brand);
    const headers = headersOfInterest(req);
    const inboxRow = (r: ApiPixRow): NewInboxRow => ({
      dedupeKey: r.dedupeKey,
      point: r.point,
      workflowId: r.workflowId,
      rawBody: raw,
      headers,
      receivedAt,
      signalName: r.signalName,
      signalPayload: r.signalPayload,
      nextAttemptAt: new Date(receivedAt.getTime() + lease),
    });
    let stored: Array<Stored | undefined>;
    try {
      stored = await withTimeout(
        Promise.all(
          rows.map((r) =>
            r.keepOnly
              ? insertKept(deps.pool, inboxRow(r), r.keepOnly).then(() => undefined)
              : insertInbox(deps.pool, inboxRow(r), delivery.coalesceMs),
          ),
        ),
        timeoutMs,
        'inbox insert',
      );
    } catch (err) {
      log.error({ err: String(err), point: POINT }, 'webhook inbox unavailable; answering 503');
      throw new Problem(
        503,
        'inbox-unavailable',
        'Cannot store the notification now; retry later',
        undefined,
        {},
        5,
      );
    }
    const duplicates = stored.filter((s) => s !== undefined && 'joined' in s).length;
    for (const s of stored) {
      deps.metrics?.countNotification(
        POINT,
        'pix',
        s !== undefined && 'joined' in s ? 'duplicate' : 'stored',
      );
    }
    res.status(200).json({ received: rows.length, duplicates });
    log.info({ point: POINT, pix: rows.length, duplicates, brand }, 'API Pix notification stored');
    rows.forEach((r, i) => {
      const s = stored[i];
      if (s && !('joined' in s) && s.deliverNow) signalNow(ctx, log, s.id, r, receivedAt);
    });
  };

  const router = express.Router();
  // The PSP's bodies are JSON; the raw text is what the inbox keeps.
  const rawBody = express.text({ type: () => true, limit: '64kb' });
  const checks = [failures.refuseWhileLimited, checkSecret];
  if (clientCas) checks.push(peerCertificateCheck(clientCas, failures, log));
  router.post('/webhooks/api-pix/:secret/pix', ...checks, rawBody, receive);
  router.use(apiPixErrors(deps));
  return router;
}

/** After the answer: the relay takes the row if this fails or the process dies. */
function signalNow(ctx: DeliveryContext, log: Logger, id: number, r: ApiPixRow, receivedAt: Date) {
  const { point, workflowId, signalName, signalPayload, logTarget } = r;
  claimForDelivery(ctx.pool, id)
    .then((mine) =>
      mine
        ? deliverRow(ctx, { id, point, workflowId, signalName, signalPayload, receivedAt, attempts: 0 })
        : 'claimed elsewhere',
    )
    .then(
      (outcome) => log.debug({ point, target: logTarget, outcome }, 'API Pix notification delivery'),
      (err) =>
        log.warn({ err: String(err), target: logTarget }, 'API Pix notification delivery not recorded'),
    );
}

/** Every refusal as problem+json, never with the path's secret. */
function apiPixErrors(deps: Pick<ApiPixIngressDeps, 'log' | 'metrics'>) {
  return (err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const e = err as { status?: number; type?: string };
    const status = err instanceof Problem ? err.status : (e.status ?? 500);
    deps.metrics?.countNotification(POINT, 'unknown', `rejected_${status}`);
    if (err instanceof Problem) return sendProblem(res, err, INSTANCE);
    if (e.type === 'entity.too.large')
      return sendProblem(res, new Problem(413, 'body-too-large', 'Request body too large'), INSTANCE);
    if (status >= 400 && status < 500)
      return sendProblem(res, new Problem(status, 'bad-request', 'Bad request', e.type), INSTANCE);
    deps.log.error({ err: String(err) }, 'API Pix webhook ingress error');
    sendProblem(res, new Problem(500, 'internal', 'Internal error'), INSTANCE);
  };
}
