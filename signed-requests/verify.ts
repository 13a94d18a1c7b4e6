import express, { type RequestHandler, type Response } from 'express';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import type { ZodType } from 'zod';

// The receiving side of client.ts: an endpoint that takes pixflow's signed JSON POSTs, as the
// operator's service does (the sandbox emulates the eligibility registry and the payout
// authorization with it). The signature covers the body's bytes, so the body is read as text and
// parsed only once verified.

/** Sends a refusal in the server's own error shape. */
export type Refuse = (
  res: Response,
  status: 400 | 401,
  error: 'Bad Request' | 'Unauthorized',
  message: string | string[],
) => void;

export interface SignedJsonEndpoint<T> {
  /** The signing secret, `whsec_<base64>` (Standard Webhooks). */
  secret: string;
  /** The request's contract: a body off it is a 400 naming every bad field. */
  request: ZodType<T>;
  refuse: Refuse;
  /** Called after a request's signature did not verify and its 401 was sent. */
  onUnverified?: () => void;
  /** Answers a verified request on contract. */
  answer: (request: T, res: Response) => void;
}

/**
 * The handlers of a signed JSON endpoint: an unsigned or wrongly signed request is a 401
 * (`signature: …`), a signed body that is not JSON or off contract a 400, never a throw.
 */
export function signedJsonEndpoint<T>(o: SignedJsonEndpoint<T>): RequestHandler[] {
  const webhook = new Webhook(o.secret);
  const verify: RequestHandler = (req, res) => {
    const raw = typeof req.body === 'string' ? req.body : '';
    try {
      webhook.verify(
        raw,
        {
          'webhook-id': req.get('webhook-id') ?? '',
          'webhook-timestamp': req.get('webhook-timestamp') ?? '',
          'webhook-signature': req.get('webhook-signature') ?? '',
        },
        { jsonParse: false },
      );
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      o.refuse(res, 401, 'Unauthorized', `signature: ${err.message}`);
      o.onUnverified?.();
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      o.refuse(res, 400, 'Bad Request', 'body: not JSON');
      return;
    }
    const parsed = o.request.safeParse(json ?? {});
    if (!parsed.success) {
      o.refuse(
        res,
        400,
        'Bad Request',
        parsed.error.issues.map((i) => `${i.path.map(String).join('.') || 'body'}: ${i.message}`),
      );
      return;
    }
    o.answer(parsed.data, res);
  };
  return [express.text({ type: () => true, limit: '16kb' }), verify];
}
