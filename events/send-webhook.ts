import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import { guardedLookup, type UrlPolicy, webhookUrlProblem } from '../common/url-safety';

// One webhook attempt in the Standard Webhooks format: `webhook-id` (the event's id, the same on
// every attempt), `webhook-timestamp` (this attempt's, in seconds) and `webhook-signature`, one
// `v1,<signature>` per secret that signs (two while a rotated-out secret overlaps the new one).
// No redirects are followed; a 2xx is delivered, a 410 says the endpoint is gone, anything else
// (or no answer within the timeout) is a failure to retry.

export interface WebhookMessage {
  url: string;
  id: string;
  body: string;
  /** Signing secrets in the `whsec_...` form. */
  secrets: string[];
}

export interface AttemptOutcome {
  outcome: 'delivered' | 'failed' | 'gone';
  statusCode: number | null;
  error: string | null;
  /** The start of the receiver's answer, for the attempt's record. */
  response: string | null;
  durationMs: number;
}

const RESPONSE_KEPT = 512;

/**
 * The Standard Webhooks headers of one attempt, signed now with every secret given: HMAC-SHA256
 * of `id.timestamp.body` under the secret's base64 key, as the standardwebhooks library signs,
 * with Node's own HMAC (the library's is plain JavaScript, run for every delivery).
 */
export function signedHeaders(m: Pick<WebhookMessage, 'id' | 'body' | 'secrets'>, now = new Date()) {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signed = `${m.id}.${timestamp}.${m.body}`;
  const sign = (secret: string) =>
    `v1,${createHmac('sha256', Buffer.from(secret.replace(/^whsec_/, ''), 'base64'))
      .update(signed)
      .digest('base64')}`;
  return {
    'webhook-id': m.id,
    'webhook-timestamp': timestamp,
    'webhook-signature': m.secrets.map(sign).join(' '),
  };
}

export function sendWebhook(
  m: WebhookMessage,
  o: { timeoutMs: number; policy: UrlPolicy },
): Promise<AttemptOutcome> {
  const started = performance.now();
  const took = () => Math.round(performance.now() - started);
  const refused = webhookUrlProblem(m.url, o.policy);
  if (refused) return Promise.resolve(failed(`url refused: ${refused}`, took()));
  const url = new URL(m.url);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (r: AttemptOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(r);
    };
    const req = client.request(
      url,
      {
        method: 'POST',
        lookup: guardedLookup(o.policy) as never,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'pixflow-webhooks/1',
          ...signedHeaders(m),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        res.on('data', (c: Buffer) => {
          if (kept < RESPONSE_KEPT) chunks.push(c);
          kept += c.length;
        });
        res.on('error', () => {});
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          const response = Buffer.concat(chunks).toString('utf8').slice(0, RESPONSE_KEPT) || null;
          const outcome = status >= 200 && status < 300 ? 'delivered' : status === 410 ? 'gone' : 'failed';
          settle({ outcome, statusCode: status, error: null, response, durationMs: took() });
        });
      },
    );
    const timer = setTimeout(() => {
      req.destroy(new Error(`no answer within ${o.timeoutMs} ms`));
    }, o.timeoutMs);
    req.on('error', (err) => settle(failed(err.message, took())));
    req.end(m.body);
  });
}

const failed = (error: string, durationMs: number): AttemptOutcome => ({
  outcome: 'failed',
  statusCode: null,
  error: error.slice(0, 500),
  response: null,
  durationMs,
});
