import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { z } from 'zod';
import type { components } from './generated/schema';

// pixflow signs every event it pushes the Standard Webhooks way (docs/verifying-events.md):
// webhook-id, webhook-timestamp and webhook-signature over the raw body, with the endpoint's
// whsec_ secret. The standardwebhooks library checks the signature and the 5-minute tolerance.

export { WebhookVerificationError };

/** An event as pixflow pushes it, with its id (the webhook-id header: dedupe by it). */
export type PixflowEvent = components['schemas']['WebhookBody'] & { id: string };

/** A request's headers as Node (IncomingHttpHeaders) or fetch (Headers) holds them. */
export type EventHeaders = Headers | Record<string, string | string[] | undefined>;

const HEADERS = ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const;

/** What a verified body must be before it is handed over as an event. */
const envelopeSchema = z.looseObject({ type: z.string(), timestamp: z.string(), data: z.looseObject({}) });

function header(headers: EventHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = headers[name];
  return Array.isArray(value) ? value.join(' ') : value;
}

/**
 * The event in a webhook request, once its signature verified with one of `secrets` (while a
 * rotated secret is being deployed, pass both). `body` is the request's body exactly as received:
 * a parsed and re-serialized body is not what was signed. Throws WebhookVerificationError for a
 * request that is not a genuine, recent event: answer it with a 4xx and do nothing with it.
 */
export function verifyEvent(
  secrets: string | readonly string[],
  body: string | Buffer,
  headers: EventHeaders,
): PixflowEvent {
  const signed: Record<string, string> = {};
  for (const name of HEADERS) {
    const value = header(headers, name);
    if (!value) throw new WebhookVerificationError(`Missing required header ${name}`);
    signed[name] = value;
  }
  let refused: unknown = new WebhookVerificationError('No secret to verify with');
  for (const secret of [secrets].flat()) {
    try {
      const event = envelopeSchema.parse(new Webhook(secret).verify(body, signed));
      return { ...(event as components['schemas']['WebhookBody']), id: signed['webhook-id'] as string };
    } catch (err) {
      if (!(err instanceof WebhookVerificationError)) throw err;
      refused = err;
    }
  }
  throw refused;
}
