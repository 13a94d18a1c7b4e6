import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { BRAND_HEADER } from '../api-keys/acting-brand';
import type { Scope } from '../common/api-key';
import { BRAND_ID_PATTERN, DEFAULT_BRAND_ID } from '../contracts/brand';
import { customerVerifications } from '../contracts/customer';
import { PIX_EMAIL_MAX_LENGTH, PIX_KEY_PATTERNS, PIX_TYPES, type PixType } from '../contracts/pix-key';
import { registerWebhooks } from '../events/event-schemas';
import { errorStatuses, type Operation, V1 } from '../http/operation';
import { v1Operations } from './v1';

// /openapi.json, assembled from the operations each route declares beside its handler (their
// zod schemas are the ones the routes validate with, examples included), the answers every /v1
// route may give besides its own, and the webhooks pixflow sends.

const errorText: Record<number, string> = {
  400: 'Invalid body, path or query parameter, or Pixflow-Brand header (invalid_params names each field): a platform key that names no brand (type `brand-required`) or one that does not exist (type `unknown-brand`)',
  401: 'Missing, wrong, expired or revoked API key',
  403: "The API key lacks a scope this operation needs (type `insufficient-scope`; `detail` and `missing_scopes` name it), or it is a brand's key and Pixflow-Brand names another brand (type `brand-not-allowed`)",
  404: 'No such flow, customer, account, webhook endpoint or event (or nothing to serve yet)',
  409: "Conflicts with the existing flow, or a rule or the flow's state refuses it (type and detail say which; a refusal of the rules also carries its `reason`, the `policyVersion` it was decided under (with `brandPolicyVersion`, the version of the brand's own rules laid on it, when the flow's brand sets any) and the `workflowId` of the flow that keeps it)",
  410: 'The flow has finished without it, for good (flowStatus and reason say why)',
  422: "Refused (detail says why: the provider refused it, or the key is not the person's own); the same request would be refused again",
  429: 'Too many requests with this API key, or too many failed authentications from this address: retry after the Retry-After seconds',
  503: "Temporal or the flow's worker cannot answer now, or not within the API's deadline (TEMPORAL_CALL_TIMEOUT_MS): retry after the Retry-After seconds; what the request started goes on, and the same request again gets its answer (a new deposit's flow, for one, keeps asking the registry of impeded people while it does not answer)",
};

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

/** Every error answer: RFC 9457 problem details, with pixflow's own members. */
export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    invalid_params: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
    flowStatus: z
      .string()
      .optional()
      .meta({ description: "the flow's status, when it is why the request cannot be answered" }),
    reason: z
      .string()
      .optional()
      .meta({ description: "a reason code: the flow's reason for that status, or the rule that refuses" }),
    verification: z
      .enum(customerVerifications)
      .optional()
      .meta({ description: "the person's verification, when it is why a flow is not started" }),
    impeded: z
      .object({ reason: z.string(), since: z.string(), until: z.string().nullable() })
      .optional()
      .meta({
        description: 'why and since when the registry of impeded people bars the person (type `impeded`)',
      }),
  })
  .meta({
    id: 'Problem',
    example: {
      type: 'https://pixflow.dev/problems/validation-error',
      title: 'Request validation failed',
      status: 400,
      detail: 'body.client.cpf: has invalid check digits',
      instance: '/v1/deposits',
      invalid_params: [{ name: 'body.client.cpf', reason: 'has invalid check digits' }],
    },
  });

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
 * variant per type, from contracts/pix-key's own rules. The composite ACCOUNT key is the named
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
  // Each variant requires the type itself, so that exactly one matches.
  return PIX_TYPES.map((type) => ({
    required: ['pixType', 'pixKey'],
    properties: { pixType: { const: type }, pixKey: variants[type] },
  }));
}

const withScopes = (description: string | undefined, scopes: readonly Scope[]) =>
  `${description ? `${description}\n\n` : ''}API key scope: ${scopes.map((s) => `\`${s}\``).join(' and ')} (a write scope includes its read).`;

/** OpenAPI's form of an operation's path: `/v1/deposits/{txid}`. */
const documentedPath = (op: Operation) => `${V1}${op.path.replace(/:(\w+)/g, '{$1}')}`;

function registerOperation(registry: OpenAPIRegistry, op: Operation) {
  const responses: Record<string, unknown> = {};
  for (const ok of op.ok) {
    responses[ok.status] = {
      description: ok.description,
      ...(ok.schema ? { content: { 'application/json': { schema: ok.schema } } } : {}),
      ...(ok.png ? { content: { 'image/png': { schema: { type: 'string', format: 'binary' } } } } : {}),
    };
  }
  // Every operation also answers 400 for a Pixflow-Brand it may not act on.
  for (const status of [...new Set([400, ...errorStatuses(op)])].sort((a, b) => a - b)) {
    responses[status] = {
      description: errorText[status] ?? 'Error',
      ...(problemHeaders[status] ? { headers: problemHeaders[status] } : {}),
      content: { 'application/problem+json': { schema: problemSchema } },
    };
  }
  registry.registerPath({
    operationId: op.operationId,
    method: op.method,
    path: documentedPath(op),
    tags: [op.tag],
    summary: op.summary,
    description: withScopes(op.description, op.scopes),
    // OpenAPI 3.1 lets a non-OAuth scheme list the roles an operation needs: the key's scopes.
    security: [{ apiKey: [...op.scopes] }],
    request: {
      params: op.params,
      query: op.query,
      body: op.body ? { required: true, content: { 'application/json': { schema: op.body } } } : undefined,
    },
    responses: responses as Parameters<typeof registry.registerPath>[0]['responses'],
  });
}

/** The operations' groups, in the order the reference shows them. */
const tags = [
  {
    name: 'Onboarding',
    description: "A person's KYC and liveness check, and their biometric identifications",
  },
  { name: 'Deposits', description: 'Pix in: a QR code to pay, then its payment' },
  { name: 'Withdrawals', description: "Pix out: a payout to the person's own key, within the money rules" },
  { name: 'Flows', description: 'Every flow, listed and filtered' },
  { name: 'Customers', description: 'The person: verification, facts and registered accounts' },
  { name: 'Events', description: 'What happened, pushed to webhook endpoints or pulled from /v1/events' },
];

/** The header a request names the brand it acts for in, on every /v1 path (api-keys/acting-brand.ts). */
const brandParameter = {
  name: BRAND_HEADER,
  in: 'header',
  required: false,
  description: `The brand this request acts for. A brand's key acts for its own brand: it may leave this out or name its own brand, and is refused 403 \`brand-not-allowed\` for any other. A platform key (made with \`--platform\`) must name one on every request: 400 \`brand-required\` without it, 400 \`unknown-brand\` for a brand that does not exist. Keys made before brands, and keys from API_KEYS, act for \`${DEFAULT_BRAND_ID}\`.`,
  schema: { type: 'string', format: 'brand-id', pattern: BRAND_ID_PATTERN.source, example: 'bet-rio' },
};

export function buildOpenApiDocument() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description:
      // CommonMark: the placeholder is code, or the page would read it as an HTML tag and drop it.
      "`Authorization: Bearer <api key>`. Each operation names the scopes the key needs (a write scope includes its read); a key from API_KEYS holds every scope. Every request acts for one brand: a brand's key for its own, a platform key for the brand it names in the `Pixflow-Brand` header.",
  });
  registry.registerComponent('parameters', 'PixflowBrand', brandParameter as never);
  for (const op of v1Operations) registerOperation(registry, op);
  registerWebhooks(registry);
  const doc = new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'pixflow API',
      version: '1.0.0',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      description:
        'Onboarding (KYC + liveness), Pix deposits and withdrawals as durable workflows. Amounts are integer centavos. Errors are application/problem+json (RFC 9457).',
    },
    servers: [{ url: '/' }],
    tags,
  });
  withTextRule(doc);
  // Every /v1 operation takes the header (api-keys/acting-brand.ts).
  for (const [p, item] of Object.entries(doc.paths ?? {})) {
    if (!p.startsWith(`${V1}/`)) continue;
    for (const op of Object.values(item as Record<string, { parameters?: unknown[] }>)) {
      op.parameters = [...(op.parameters ?? []), { $ref: '#/components/parameters/PixflowBrand' }];
    }
  }
  // Both take a key with its type by the same rules.
  for (const id of ['WithdrawalRequest', 'CustomerAccountRequest']) {
    const request = doc.components?.schemas?.[id] as Record<string, unknown> | undefined;
    if (request) request.oneOf = pixKeyVariants();
  }
  return doc;
}
