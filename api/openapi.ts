import path from 'node:path';
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { Router } from 'express';
import { z } from 'zod';
import type { Scope } from '../common/api-key';
import { escapeHtml as esc } from '../common/html';
import { eventTypes, webhookBodySchema } from '../contracts/events';
import {
  attemptPageSchema,
  attemptsQuerySchema,
  endpointCreateSchema,
  endpointListSchema,
  endpointParamsSchema,
  endpointSchema,
  endpointUpdateSchema,
  endpointWithSecretSchema,
  eventPageSchema,
  eventParamsSchema,
  eventsQuerySchema,
  eventViewSchema,
  redeliverQuerySchema,
  redeliverySchema,
} from '../events/event-schemas';
import { PIX_EMAIL_MAX_LENGTH, PIX_KEY_PATTERNS } from '../provider/pix-key';
import { PIX_TYPES } from '../provider/pix-types';
import type { PixType } from '../provider/schemas';
import { scopesOf } from './route-scopes';
import {
  accountParamsSchema,
  biometricsResponseSchema,
  cpfParamsSchema,
  customerAccountBodySchema,
  customerAccountListSchema,
  customerAccountSchema,
  customerSchema,
  depositBodySchema,
  depositResolutionBodySchema,
  depositResolutionResponseSchema,
  depositResponseSchema,
  depositStateResponseSchema,
  flowPageSchema,
  flowsQuerySchema,
  livenessLinkResponseSchema,
  onboardingBodySchema,
  onboardingResponseSchema,
  problemSchema,
  reviewAcceptedSchema,
  reviewBodySchema,
  txidParamsSchema,
  withdrawalBodySchema,
  withdrawalParamsSchema,
  withdrawalResponseSchema,
} from './schemas';

// /openapi.json is generated from the very zod schemas the routes validate with (their examples
// included); /docs renders it with Scalar's API reference, whose bundle the API serves itself
// (no CDN: the machines running this may reach no internet).

type Method = 'get' | 'post' | 'patch' | 'delete';

interface Op {
  method: Method;
  path: string;
  tag: string;
  summary: string;
  description?: string;
  params?: z.ZodObject;
  query?: z.ZodObject;
  body?: z.ZodType;
  ok: { status: number; description: string; schema?: z.ZodType; png?: boolean }[];
  errors: number[];
  public?: boolean;
}

const errorText: Record<number, string> = {
  400: 'Invalid body, path or query parameter (invalid_params names each field)',
  401: 'Missing, wrong, expired or revoked API key',
  403: 'The API key lacks a scope this operation needs (type `insufficient-scope`; `detail` and `missing_scopes` name it)',
  404: 'No such flow, customer, account, webhook endpoint or event (or nothing to serve yet)',
  409: "Conflicts with the existing flow, or a rule or the flow's state refuses it (type and detail say which)",
  410: 'The flow has finished without it, for good (flowStatus and reason say why)',
  422: "Refused (detail says why: the provider refused it, or the key is not the person's own); the same request would be refused again",
  429: 'Too many requests with this API key, or too many failed authentications from this address: retry after the Retry-After seconds',
  503: "Temporal or the flow's worker cannot answer now, or not within the API's deadline (TEMPORAL_CALL_TIMEOUT_MS): retry after the Retry-After seconds; what the request started goes on, and the same request again gets its answer",
};

/**
 * Every /v1 route checks the key's scopes and its rate limit, and any of them may find Temporal or
 * its worker down.
 */
const FORBIDDEN = 403;
const RATE_LIMITED = 429;
const UNAVAILABLE = 503;

const retryAfter = (description: string) => ({
  description,
  required: true,
  schema: { type: 'integer', minimum: 0 },
});

const problemHeaders: Record<number, Record<string, unknown>> = {
  503: { 'Retry-After': retryAfter('seconds after which to ask again') },
  429: {
    'Retry-After': retryAfter(
      'seconds until this API key (or, after failed authentications, this address) may call again',
    ),
    RateLimit: {
      description: 'the remaining quota of this key (IETF RateLimit header fields, draft 8)',
      schema: { type: 'string' },
    },
    'RateLimit-Policy': { description: 'the quota of this key per window', schema: { type: 'string' } },
  },
};

const ops: Op[] = [
  {
    method: 'post',
    path: '/v1/onboardings',
    tag: 'Onboarding',
    summary: 'Start an onboarding (idempotent per CPF)',
    description:
      'KYC, then liveness. 201 when started; 200 with the current state when one exists (an expired one starts over).',
    body: onboardingBodySchema,
    ok: [
      { status: 201, description: 'Started', schema: onboardingResponseSchema },
      { status: 200, description: 'Already exists', schema: onboardingResponseSchema },
    ],
    errors: [400, 401],
  },
  {
    method: 'get',
    path: '/v1/onboardings/{cpf}',
    tag: 'Onboarding',
    summary: 'Onboarding state',
    description: "The liveness link's QR code is a link to its PNG (`link.qrcodeUrl`), not the image.",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'Current state', schema: onboardingResponseSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/v1/onboardings/{cpf}/liveness-link',
    tag: 'Onboarding',
    summary: "The user's liveness link: the valid one again, or a new one",
    description:
      'While the onboarding runs, its liveness link. Once it is approved, a biometric identification link (`type` biometric_identification) from its own flow (`workflowId` biometrics-...), started or attached to: the same link while that identification runs (until its outcome, or 30 minutes), a new one after. 409 for a rejected or expired onboarding, or when the provider gives no biometric identification link.',
    params: cpfParamsSchema,
    ok: [
      {
        status: 200,
        description: 'The link; `reused` says whether an earlier ask was already given it',
        schema: livenessLinkResponseSchema,
      },
    ],
    errors: [400, 401, 404, 409],
  },
  {
    method: 'get',
    path: '/v1/onboardings/{cpf}/liveness-link/qrcode.png',
    tag: 'Onboarding',
    summary: "The current liveness link's QR code image (404 while there is no link)",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'PNG image', png: true }],
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/v1/onboardings/{cpf}/review',
    tag: 'Onboarding',
    summary: 'Operator decision on an onboarding awaiting review',
    params: cpfParamsSchema,
    body: reviewBodySchema,
    ok: [{ status: 202, description: 'Decision delivered to the flow', schema: reviewAcceptedSchema }],
    errors: [400, 401, 404, 409],
  },
  {
    method: 'get',
    path: '/v1/biometrics/{cpf}',
    tag: 'Onboarding',
    summary: "The person's current or last biometric identification",
    description:
      "Its status (issuing_link, awaiting_identification, then passed, failed, expired or unavailable) and link (the QR code is in the liveness link's own answer).",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'Current state', schema: biometricsResponseSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/v1/deposits',
    tag: 'Deposits',
    summary: 'Create a deposit and get its Pix QR code in one call',
    description:
      "Idempotent per txid: the same request again answers the same QR (201 the first time, 200 after). The same txid with another amount, payer or merchant is 409 `conflict`. A new deposit for a person whose verification is not `approved` is 409 `not-verified` (reason `not_verified`, with the person's `verification`), and nothing is created; a repeat of a deposit that exists is answered as before.",
    body: depositBodySchema,
    ok: [
      { status: 201, description: 'Created', schema: depositResponseSchema },
      { status: 200, description: 'The same deposit again', schema: depositResponseSchema },
    ],
    errors: [400, 401, 409, 422],
  },
  {
    method: 'get',
    path: '/v1/deposits/{txid}',
    tag: 'Deposits',
    summary: 'Deposit state',
    description:
      "The QR code is its payload and a link to its PNG (`qr.imageUrl`), not the image. A deposit paid by someone else is `held` (reason `third_party_payer`) until an operator's `resolution`, kept in the state once decided.",
    params: txidParamsSchema,
    ok: [{ status: 200, description: 'Current state', schema: depositStateResponseSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/v1/deposits/{txid}/resolution',
    tag: 'Deposits',
    summary: 'Operator decision on a held deposit (someone other than the person paid it)',
    description:
      'Only a `held` deposit takes one, once: `accept` credits it (`completed`), `return` ends it `to_return` (the money is to be sent back by hand). Answered once the new status is recorded. 409 `not-held` with its flowStatus otherwise.',
    params: txidParamsSchema,
    body: depositResolutionBodySchema,
    ok: [
      {
        status: 200,
        description: 'The decision and the status it led to',
        schema: depositResolutionResponseSchema,
      },
    ],
    errors: [400, 401, 404, 409],
  },
  {
    method: 'get',
    path: '/v1/deposits/{txid}/qrcode.png',
    tag: 'Deposits',
    summary: 'The QR code image',
    params: txidParamsSchema,
    ok: [{ status: 200, description: 'PNG image', png: true }],
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/v1/withdrawals',
    tag: 'Withdrawals',
    summary: 'Send a Pix payout (idempotent per transactionId)',
    description:
      'The same body again is 202 with the same flow; another body with the same transactionId is 409. The answer comes once the money rules have decided (README "Rules"): `refused` with its reason code and nothing sent, `awaiting_biometrics` with the step-up link to hand the person, or on its way (`sending`).',
    body: withdrawalBodySchema,
    ok: [{ status: 202, description: 'Accepted', schema: withdrawalResponseSchema }],
    errors: [400, 401, 409],
  },
  {
    method: 'get',
    path: '/v1/withdrawals/{id}',
    tag: 'Withdrawals',
    summary: 'Withdrawal state',
    params: withdrawalParamsSchema,
    ok: [{ status: 200, description: 'Current state', schema: withdrawalResponseSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/v1/withdrawals/{id}/biometrics-link/qrcode.png',
    tag: 'Withdrawals',
    summary: "The step-up's biometric identification link as a QR code",
    description:
      'For a withdrawal that waits (or waited) for a biometric identification: 404 when it never needed one, 410 `link-unavailable` once the identification has ended.',
    params: withdrawalParamsSchema,
    ok: [{ status: 200, description: 'PNG image', png: true }],
    errors: [400, 401, 404, 410],
  },
  {
    method: 'get',
    path: '/v1/withdrawals/{id}/receipt.png',
    tag: 'Withdrawals',
    summary: 'The payout receipt image',
    description:
      'While the withdrawal runs: 404 `receipt-not-found` with Retry-After (seconds). A withdrawal that ended failed or stuck, or whose run ended short of an outcome (failed, terminated), never has one: 410 `receipt-unavailable` with its flowStatus and reason.',
    params: withdrawalParamsSchema,
    ok: [{ status: 200, description: 'PNG image', png: true }],
    errors: [400, 401, 404, 410],
  },
  {
    method: 'get',
    path: '/v1/flows',
    tag: 'Flows',
    summary: 'List flows, newest first, with filters and a cursor',
    description:
      'A status that the given type (or, without type, no flow type) has is a 400 listing the allowed ones.',
    query: flowsQuerySchema,
    ok: [{ status: 200, description: 'One page', schema: flowPageSchema }],
    errors: [400, 401],
  },
  {
    method: 'get',
    path: '/v1/customers/{cpf}',
    tag: 'Customers',
    summary: 'The person: verification, KYC facts, accounts, payouts today, open flows',
    description:
      "Read from Postgres, kept by the flows' activities. 404 for a CPF pixflow has never seen. A `suspended` verification (the provider contradicted a closed onboarding) counts as not verified.",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'The customer', schema: customerSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/v1/customers/{cpf}/accounts',
    tag: 'Customers',
    summary: "The person's registered accounts, masked",
    params: cpfParamsSchema,
    ok: [{ status: 200, description: 'Active accounts, oldest first', schema: customerAccountListSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/v1/customers/{cpf}/accounts',
    tag: 'Customers',
    summary: "Register an account as the person's own (idempotent per key)",
    description:
      "A Pix key with its type, or the composite account form (pixType ACCOUNT). A CPF key, or a composite whose key part is a CPF, must be the person's own CPF (else 422 naming body.pixKey). 201 when registered, 200 for one already registered.",
    params: cpfParamsSchema,
    body: customerAccountBodySchema,
    ok: [
      { status: 201, description: 'Registered', schema: customerAccountSchema },
      { status: 200, description: 'Already registered', schema: customerAccountSchema },
    ],
    errors: [400, 401, 404, 422],
  },
  {
    method: 'delete',
    path: '/v1/customers/{cpf}/accounts/{id}',
    tag: 'Customers',
    summary: 'Remove a registered account',
    params: accountParamsSchema,
    ok: [{ status: 204, description: 'Removed' }],
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/v1/webhook-endpoints',
    tag: 'Events',
    summary: 'Subscribe an endpoint to events; its signing secret is shown this once',
    description:
      'Deliveries follow Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature). The URL must be https to a public address (loopback only when WEBHOOK_ALLOW_LOOPBACK; private ranges only in WEBHOOK_ALLOWED_CIDRS).',
    body: endpointCreateSchema,
    ok: [{ status: 201, description: 'Created', schema: endpointWithSecretSchema }],
    errors: [400, 401],
  },
  {
    method: 'get',
    path: '/v1/webhook-endpoints',
    tag: 'Events',
    summary: "This API key's endpoints",
    ok: [{ status: 200, description: 'Endpoints', schema: endpointListSchema }],
    errors: [401],
  },
  {
    method: 'get',
    path: '/v1/webhook-endpoints/{id}',
    tag: 'Events',
    summary: 'One endpoint (another key’s is 404)',
    params: endpointParamsSchema,
    ok: [{ status: 200, description: 'Endpoint', schema: endpointSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'patch',
    path: '/v1/webhook-endpoints/{id}',
    tag: 'Events',
    summary: 'Change its URL, events or description; enable or disable it',
    params: endpointParamsSchema,
    body: endpointUpdateSchema,
    ok: [{ status: 200, description: 'Changed', schema: endpointSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'delete',
    path: '/v1/webhook-endpoints/{id}',
    tag: 'Events',
    summary: 'Delete an endpoint and its pending deliveries',
    params: endpointParamsSchema,
    ok: [{ status: 204, description: 'Deleted' }],
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/v1/webhook-endpoints/{id}/rotate-secret',
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
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/v1/webhook-endpoints/{id}/attempts',
    tag: 'Events',
    summary: 'Every delivery attempt to the endpoint, newest first',
    params: endpointParamsSchema,
    query: attemptsQuerySchema,
    ok: [{ status: 200, description: 'Attempts', schema: attemptPageSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'get',
    path: '/v1/events',
    tag: 'Events',
    summary: 'Events, oldest first, from a cursor: catch up without webhooks (kept 30 days)',
    query: eventsQuerySchema,
    ok: [{ status: 200, description: 'A page of events', schema: eventPageSchema }],
    errors: [400, 401],
  },
  {
    method: 'get',
    path: '/v1/events/{id}',
    tag: 'Events',
    summary: 'One event',
    params: eventParamsSchema,
    ok: [{ status: 200, description: 'Event', schema: eventViewSchema }],
    errors: [400, 401, 404],
  },
  {
    method: 'post',
    path: '/v1/events/{id}/redeliver',
    tag: 'Events',
    summary: "Send an event again to this key's subscribed endpoints, with the same webhook-id",
    params: eventParamsSchema,
    query: redeliverQuerySchema,
    ok: [{ status: 202, description: 'Queued', schema: redeliverySchema }],
    errors: [400, 401, 404],
  },
];

/**
 * The webhooks pixflow sends, one per flow type (the event types of each in its description), in
 * the document's `webhooks` section: the same schemas the relay's bodies and GET /v1/events use.
 */
function registerWebhooks(registry: OpenAPIRegistry) {
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
      method: 'post',
      path: family,
      tags: ['Events'],
      summary: `${family} events`,
      description: `Types: ${types.map((t) => `\`${t}\``).join(', ')}. Answer 2xx within 10 s; anything else is retried for about 3 days; 410 disables the endpoint.`,
      request: {
        headers,
        body: { required: true, content: { 'application/json': { schema: webhookBodySchema } } },
      },
      responses: { 200: { description: 'Received (any 2xx)' } },
    });
  }
}

/**
 * What the API refuses in every text field (http/request-input.ts `parse`): NUL, which Postgres cannot
 * store, as the pattern of every string schema that has no rule of its own, so the document
 * admits no text the API refuses. (Lone surrogates, refused too, are not Unicode text at all;
 * a pattern cannot name them in every regex dialect that validators use.)
 */
const WELL_FORMED_TEXT = '^[^\\u0000]*$';

/** Adds the rule to every free string schema of a request, following $refs into components. */
function withTextRule(doc: { paths?: unknown; components?: { schemas?: Record<string, unknown> } }): void {
  const seen = new Set<unknown>();
  const visit = (node: unknown): void => {
    if (!node || typeof node !== 'object' || seen.has(node)) return;
    seen.add(node);
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    const schema = node as Record<string, unknown>;
    if (typeof schema.$ref === 'string') {
      visit(doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')]);
      return;
    }
    const free = !('pattern' in schema || 'enum' in schema || 'const' in schema || 'format' in schema);
    if (schema.type === 'string' && free) schema.pattern = WELL_FORMED_TEXT;
    for (const [key, value] of Object.entries(schema)) {
      if (key !== 'example' && key !== 'examples') visit(value);
    }
  };
  // Requests only: an answer may quote the caller's text back (a malformed body's parse error).
  for (const item of Object.values((doc.paths ?? {}) as Record<string, Record<string, DocOperation>>)) {
    for (const op of Object.values(item)) {
      for (const p of op.parameters ?? []) visit(p.schema);
      for (const media of Object.values(op.requestBody?.content ?? {})) visit(media.schema);
    }
  }
}

/** The parts of a generated operation the text rule reads. */
interface DocOperation {
  parameters?: { schema?: unknown }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
}

const unanchored = (re: RegExp) => re.source.replace(/^\^|\$$/g, '');

/**
 * A withdrawal's pixKey follows its pixType (a refinement zod's generator cannot describe): one
 * variant per type, from provider/pix-key's own rules. The composite ACCOUNT key is the named
 * format `pix-account-key`: its first part is itself a key, and a CPF there needs check digits.
 */
function pixKeyVariants(): Record<string, unknown>[] {
  const { EVP, PHONE, EMAIL } = PIX_KEY_PATTERNS;
  const keyPart = ['\\d{11}', unanchored(EMAIL), unanchored(PHONE), unanchored(EVP)].join('|');
  const variants: Record<PixType, Record<string, unknown>> = {
    CPF: { $ref: '#/components/schemas/Cpf' },
    EMAIL: { type: 'string', maxLength: PIX_EMAIL_MAX_LENGTH, pattern: EMAIL.source },
    PHONE: { type: 'string', pattern: PHONE.source, description: '+55, area code and number (E.164)' },
    EVP: { type: 'string', pattern: EVP.source, description: 'a random key (UUID)' },
    ACCOUNT: {
      type: 'string',
      format: 'pix-account-key',
      pattern: `^(?:${keyPart});\\d{8};\\d{1,5};\\d{1,20};(?:CACC|SVGS|TRAN)$`,
      description:
        '`key;ispb;branch;account;type`: key a CPF (valid check digits), e-mail (at most 77 characters), +55 phone or EVP Pix key; ispb 8 digits; branch 1-5 digits; account 1-20 digits; type CACC, SVGS or TRAN',
      example: '63401825771;60701190;1234;987654321;CACC',
    },
  };
  return PIX_TYPES.map((type) => ({
    properties: { pixType: { const: type }, pixKey: variants[type] },
  }));
}

/** The operation's scopes from api/route-scopes.ts, the table the API enforces. */
function scopesNeeded(op: Op): readonly Scope[] {
  const scopes = scopesOf(op.method, op.path.replace(/\{(\w+)\}/g, ':$1'));
  if (!scopes) throw new Error(`api/route-scopes.ts lists no scopes for ${op.method} ${op.path}`);
  return scopes;
}

const withScopes = (description: string | undefined, scopes: readonly Scope[]) =>
  `${description ? `${description}\n\n` : ''}API key scope: ${scopes.map((s) => `\`${s}\``).join(' and ')} (a write scope includes its read).`;

export function buildOpenApiDocument() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description:
      'Authorization: Bearer <api key>. Each operation names the scopes the key needs (a write scope includes its read); a key from API_KEYS holds every scope.',
  });
  for (const op of ops) {
    const responses: Record<string, unknown> = {};
    for (const ok of op.ok) {
      responses[ok.status] = {
        description: ok.description,
        ...(ok.schema ? { content: { 'application/json': { schema: ok.schema } } } : {}),
        ...(ok.png ? { content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } } : {}),
      };
    }
    const errors = op.public ? op.errors : [...new Set([...op.errors, FORBIDDEN, RATE_LIMITED, UNAVAILABLE])];
    const scopes = op.public ? [] : scopesNeeded(op);
    for (const status of errors) {
      responses[status] = {
        description: errorText[status] ?? 'Error',
        ...(problemHeaders[status] ? { headers: problemHeaders[status] } : {}),
        content: { 'application/problem+json': { schema: problemSchema } },
      };
    }
    registry.registerPath({
      method: op.method,
      path: op.path,
      tags: [op.tag],
      summary: op.summary,
      description: op.public ? op.description : withScopes(op.description, scopes),
      // OpenAPI 3.1 lets a non-OAuth scheme list the roles an operation needs: the key's scopes.
      security: op.public ? [] : [{ apiKey: [...scopes] }],
      request: {
        params: op.params,
        query: op.query,
        body: op.body ? { required: true, content: { 'application/json': { schema: op.body } } } : undefined,
      },
      responses: responses as Parameters<typeof registry.registerPath>[0]['responses'],
    });
  }
  registerWebhooks(registry);
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'pixflow API',
      version: '1.0.0',
      description:
        'Onboarding (KYC + liveness), Pix deposits and withdrawals as durable workflows. Amounts are integer centavos. Errors are application/problem+json (RFC 9457).',
    },
    servers: [{ url: '/' }],
  });
  withTextRule(doc);
  // Both take a key with its type by the same rules.
  for (const id of ['WithdrawalRequest', 'CustomerAccountRequest']) {
    const request = doc.components?.schemas?.[id] as Record<string, unknown> | undefined;
    if (request) request.oneOf = pixKeyVariants();
  }
  return doc;
}

/** The reference's standalone browser bundle, served from node_modules: no CDN at run time. */
const REFERENCE_BUNDLE = path.join(
  path.dirname(require.resolve('@scalar/api-reference')),
  'browser',
  'standalone.js',
);
const REFERENCE_BUNDLE_PATH = '/docs/api-reference.js';

/**
 * The page's own policy: the bundle is a script from here that injects its styles, fetches the
 * document and sends "try it" requests to this origin. Fonts are the browser's own
 * (`withDefaultFonts: false`; the default would fetch them from Scalar's CDN).
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The page: the bundle mounts the reference where the configuration script stands. */
export function renderDocsHtml(title: string): string {
  // Scalar's hosted services (AI agent, MCP, developer tools, telemetry) stay off: this page
  // reads the document from this API and nothing else.
  const config = {
    url: '/openapi.json',
    withDefaultFonts: false,
    telemetry: false,
    agent: { disabled: true },
    mcp: { disabled: true },
    showDeveloperTools: 'never',
    documentDownloadType: 'json',
    authentication: { preferredSecurityScheme: 'apiKey' },
  };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(title)}</title><link rel="icon" href="data:,"></head>
<body><script id="api-reference" data-configuration="${esc(JSON.stringify(config))}"></script>
<script src="${REFERENCE_BUNDLE_PATH}"></script></body></html>`;
}

export function openApiRoutes() {
  const doc = buildOpenApiDocument();
  const html = renderDocsHtml(doc.info.title);
  const r = Router();
  r.get('/openapi.json', (_req, res) => {
    res.json(doc);
  });
  r.get('/docs', (_req, res) => {
    res.set('content-security-policy', DOCS_CSP).type('html').send(html);
  });
  r.get(REFERENCE_BUNDLE_PATH, (_req, res, next) => {
    res.sendFile(REFERENCE_BUNDLE, { maxAge: '1h' }, (err) => err && next(err));
  });
  return r;
}
