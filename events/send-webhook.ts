import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
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

/** The Standard Webhooks headers of one attempt, signed now with every secret given. */
function signedHeaders(m: Pick<WebhookMessage, 'id' | 'body' | 'secrets'>, now = new Date()) {
  return {
    'webhook-id': m.id,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': m.secrets.map((s) => new Webhook(s).sign(m.id, now, m.body)).join(' '),
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
