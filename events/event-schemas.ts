import type { OpenAPIRegistry } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { DEPOSIT_REVERSED, eventSchema, eventTypes, webhookBodySchema } from '../contracts/events';

// The API's boundary for outbound events: webhook endpoints (create, list, get, update, delete,
// rotate their secret, list their attempts) and the pull API (GET /v1/events, redelivery).

const iso = z.string().meta({ description: 'ISO 8601 time, UTC' });

// Every request and answer carries an example its own schema accepts (the API reference shows it).
const AT = '2026-11-23T18:04:05.120Z';
const LATER = '2026-11-23T18:04:09.481Z';
const TXID = '7d1f0c2a9b8e4d6f8a1b2c3d4e5f6a7b';
const ENDPOINT_ID = 'we_3f9a1c0b7e2d4a5b6c7d8e9f';
const EVENT_ID = 'evt_5f0c6a1e2b3d4c5e8f9a0b1c2d3e4f50';
const ENDPOINT = {
  id: ENDPOINT_ID,
  url: 'https://backend.example.com/pixflow/events',
  description: 'payments backend',
  events: ['deposit.completed', 'withdrawal.completed', 'onboarding.awaiting_review'],
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  failingSince: null,
  previousSecretUntil: null,
  createdAt: AT,
  updatedAt: AT,
};
const SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
export const EVENT_EXAMPLE = {
  id: EVENT_ID,
  type: 'deposit.completed',
  brand: 'default',
  timestamp: LATER,
  data: {
    flowId: `deposit-${TXID}`,
    flowType: 'deposit' as const,
    businessId: TXID,
    sequence: 2,
    state: {
      workflowId: `deposit-${TXID}`,
      type: 'deposit' as const,
      businessId: TXID,
      status: 'completed',
      cpfHash: '5d41402abc4b2a76b9719d911017c592a1f0e3b7c6d8e9f0a1b2c3d4e5f60718',
      cpfMasked: '***.018.257-**',
      merchant: 'sandbox-merchant',
      amountCentavos: 15_000,
      reason: null,
      details: { e2eId: 'E12345678202611231804ABCDEFGHIJK', paidAt: LATER, payerIsClient: true },
      createdAt: AT,
      updatedAt: LATER,
    },
  },
};
const notAType = (t: unknown) =>
  `${JSON.stringify(t)?.slice(0, 60)} is not an event type; one of "*" or: ${eventTypes.join(', ')}`;

export const endpointIdSchema = z
  .string()
  .regex(/^we_[0-9a-f]{24}$/, 'is not a webhook endpoint id (we_ and 24 hex digits)');
export const eventIdSchema = z
  .string()
  .regex(/^evt_[0-9a-f]{32}$/, 'is not an event id (evt_ and 32 hex digits)');

const subscribedSchema = z
  .array(z.enum(['*', ...eventTypes] as [string, ...string[]], { error: (i) => notAType(i.input) }))
  .min(1, 'must name at least one event type, or "*" for all')
  .max(eventTypes.length + 1)
  .transform((ts) => (ts.includes('*') ? ['*'] : [...new Set(ts)]))
  .meta({ description: 'event types to receive; ["*"] for every type' });

/**
 * Where webhooks go: the named format `webhook-url` in /openapi.json. The route checks it against
 * the deployment's rules (common/url-safety.ts), which a pattern cannot say.
 */
const urlSchema = z
  .string()
  .min(1, 'is required')
  .max(2048)
  .meta({
    format: 'webhook-url',
    description:
      'an https URL to a public address, without credentials; private, shared, link-local and loopback addresses are refused (loopback, over http too, only where WEBHOOK_ALLOW_LOOPBACK is set; private ranges only as listed in WEBHOOK_ALLOWED_CIDRS)',
    examples: ['https://backend.example.com/pixflow/events'],
  });

export const endpointCreateSchema = z
  .object({
    url: urlSchema,
    events: subscribedSchema,
    description: z.string().max(500).default(''),
  })
  .meta({
    id: 'WebhookEndpointCreate',
    example: { url: ENDPOINT.url, events: ENDPOINT.events, description: ENDPOINT.description },
  });

export const endpointUpdateSchema = z
  .object({
    url: urlSchema.optional(),
    events: subscribedSchema.optional(),
    description: z.string().max(500).optional(),
    enabled: z.boolean().optional().meta({ description: 'true also forgets why it was disabled' }),
  })
  .meta({ id: 'WebhookEndpointUpdate', example: { events: ['*'], enabled: true } });

export const endpointParamsSchema = z.object({ id: endpointIdSchema });
export const eventParamsSchema = z.object({ id: eventIdSchema });

export const endpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string(),
    events: z.array(z.string()),
    enabled: z.boolean(),
    disabledReason: z.enum(['gone', 'failing']).nullable(),
    disabledAt: iso.nullable(),
    failingSince: iso.nullable().meta({ description: 'the first failed attempt since the last success' }),
    previousSecretUntil: iso.nullable().meta({
      description: 'while set and ahead, the rotated-out secret still signs beside the current one',
    }),
    createdAt: iso,
    updatedAt: iso,
  })
  .meta({ id: 'WebhookEndpoint', example: ENDPOINT });

export const endpointWithSecretSchema = endpointSchema
  .extend({
    secret: z.string().meta({ description: 'whsec_...: shown this once; pixflow keeps it sealed' }),
  })
  .meta({ id: 'WebhookEndpointWithSecret', example: { ...ENDPOINT, secret: SECRET } });

export const endpointListSchema = z
  .object({ items: z.array(endpointSchema) })
  .meta({ id: 'WebhookEndpointList', example: { items: [ENDPOINT] } });

export const attemptSchema = z
  .object({
    id: z.number().int(),
    eventId: z.string(),
    eventType: z.string().nullable(),
    attempt: z.number().int().meta({ description: "the delivery's attempt number, 1 for the first" }),
    at: iso,
    durationMs: z.number().int(),
    statusCode: z.number().int().nullable(),
    error: z.string().nullable(),
    response: z.string().nullable().meta({ description: "the start of the receiver's answer" }),
    outcome: z.enum(['delivered', 'failed', 'gone']),
  })
  .meta({ id: 'WebhookAttempt' });

/** A position in a list: the `next` of the previous page. */
const cursorSchema = z
  .string()
  .regex(/^\d{1,15}$/, 'is not a cursor (the `next` of a previous page)')
  .meta({ description: 'the `next` of the previous page' });
const limitSchema = (max: number, dflt: number) => z.coerce.number().int().min(1).max(max).default(dflt);

export const attemptsQuerySchema = z.object({
  cursor: cursorSchema.optional(),
  event: eventIdSchema.optional().meta({ description: "only this event's attempts" }),
  limit: limitSchema(100, 20),
});

export const attemptPageSchema = z
  .object({
    items: z.array(attemptSchema).meta({ description: 'newest first' }),
    next: z
      .string()
      .nullable()
      .meta({ description: 'cursor of the next (older) page; null on the last one' }),
  })
  .meta({
    id: 'WebhookAttemptPage',
    example: {
      items: [
        {
          id: 42,
          eventId: EVENT_ID,
          eventType: 'deposit.completed',
          attempt: 2,
          at: LATER,
          durationMs: 38,
          statusCode: 204,
          error: null,
          response: null,
          outcome: 'delivered',
        },
        {
          id: 41,
          eventId: EVENT_ID,
          eventType: 'deposit.completed',
          attempt: 1,
          at: AT,
          durationMs: 10_003,
          statusCode: null,
          error: 'no answer within 10000 ms',
          response: null,
          outcome: 'failed',
        },
      ],
      next: null,
    },
  });

const oneType = eventTypes.map((t) => t.replace('.', '\\.')).join('|');
/** One event type or several, comma-separated: the document says it as a pattern. */
const typeList = new RegExp(`^(?:${oneType})(?:,(?:${oneType}))*$`);

export const eventsQuerySchema = z.object({
  after: cursorSchema
    .optional()
    .meta({ description: 'opaque: the `next` of the previous page; unset: the oldest kept' }),
  type: z
    .string()
    .regex(typeList, 'must be event types, comma-separated (see the catalog)')
    .transform((v) => v.split(','))
    .optional()
    .meta({ description: 'comma-separated event types' }),
  flow: z.string().min(1).max(200).optional().meta({ description: "a flow's id (its workflow id)" }),
  limit: limitSchema(500, 100),
});

/** One event, as the API answers it. */
export const eventViewSchema = eventSchema.meta({ id: 'Event', example: EVENT_EXAMPLE });

export const eventPageSchema = z
  .object({
    items: z.array(eventViewSchema).meta({ description: 'oldest first (newest last)' }),
    next: z.string().meta({
      description: 'where to go on from: pass it as `after`; the same cursor again when nothing is new',
    }),
    hasMore: z.boolean(),
  })
  .meta({ id: 'EventPage', example: { items: [EVENT_EXAMPLE], next: '17', hasMore: false } });

export const redeliverySchema = z
  .object({
    eventId: z.string(),
    endpoints: z.array(z.string()).meta({ description: 'the endpoints it is sent to again' }),
  })
  .meta({ id: 'Redelivery', example: { eventId: EVENT_ID, endpoints: [ENDPOINT_ID] } });

export const redeliverQuerySchema = z.object({
  endpoint: endpointIdSchema.optional().meta({ description: 'only to this endpoint' }),
});

/** `webhook_endpoint` as `WebhookEndpoint`. */
const pascalCase = (name: string) => name.replace(/(?:^|_)(\w)/g, (_, c: string) => c.toUpperCase());

/** What a family's webhook says besides its types: the body of its events that are no status. */
const FAMILY_NOTES: Record<string, string> = {
  deposit: ` \`${DEPOSIT_REVERSED}\` comes once per return of a completed deposit's Pix that pixflow did not ask for (MED): its state's details.reversal is that return (returnId, e2eId, nature med_operational, med_fraud, med_automatic, original or withdrawal, amountCentavos, partial, state processing, returned or failed, firstSeenAt, settledAt), details.reversed every one so far; the deposit's status stays what it was.`,
};

/**
 * The webhooks pixflow sends, one per flow type (the event types of each in its description), in
 * the document's `webhooks` section: the same schemas the relay's bodies and GET /v1/events use.
 */
export function registerWebhooks(registry: OpenAPIRegistry) {
  const headers = z.object({
    'webhook-id': z.string().meta({ description: "the event's id: the same on every attempt; dedupe by it" }),
    'webhook-timestamp': z.string().meta({ description: "this attempt's time, Unix seconds" }),
    'webhook-signature': z.string().meta({
      description:
        'v1,<base64 HMAC-SHA256 of id.timestamp.body>, space-separated: two while a rotated secret overlaps',
    }),
  });
  const families = new Map<string, string[]>();
  for (const t of eventTypes) {
    const family = t.slice(0, t.indexOf('.'));
    families.set(family, [...(families.get(family) ?? []), t]);
  }
  for (const [family, types] of families) {
    registry.registerWebhook({
      operationId: `receive${pascalCase(family)}Event`,
      method: 'post',
      path: family,
      tags: ['Events'],
      // No HTTP authentication: the receiver verifies the webhook-signature header instead.
      security: [],
      summary: `${family} events`,
      description: `Types: ${types.map((t) => `\`${t}\``).join(', ')}.${FAMILY_NOTES[family] ?? ''} Answer 2xx within 10 s; anything else is retried for about 3 days; 410 disables the endpoint.`,
      request: {
        headers,
        body: { required: true, content: { 'application/json': { schema: webhookBodySchema } } },
      },
      responses: { 200: { description: 'Received (any 2xx)' } },
    });
  }
}
