import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import { Router } from 'express';
import type { z } from 'zod';
import { escapeHtml as esc } from '../common/html';
import {
  cpfParamsSchema,
  depositBodySchema,
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

// /openapi.json is generated from the very zod schemas the routes validate with; /docs renders it
// as a self-contained HTML page (no CDN: the machines running this may reach no internet).

type Method = 'get' | 'post';

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
  401: 'Missing or wrong API key',
  404: 'No such flow (or nothing to serve yet)',
  409: 'Conflicts with the existing flow',
  410: 'The flow has finished without it, for good (flowStatus and reason say why)',
  502: 'The provider refused or failed',
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
    method: 'post',
    path: '/v1/deposits',
    tag: 'Deposits',
    summary: 'Create a deposit and get its Pix QR code in one call',
    description:
      'Idempotent per txid: the same request again answers the same QR (201 the first time, 200 after). The same txid with another amount, payer or merchant is 409.',
    body: depositBodySchema,
    ok: [
      { status: 201, description: 'Created', schema: depositResponseSchema },
      { status: 200, description: 'The same deposit again', schema: depositResponseSchema },
    ],
    errors: [400, 401, 409, 502],
  },
  {
    method: 'get',
    path: '/v1/deposits/{txid}',
    tag: 'Deposits',
    summary: 'Deposit state',
    description: 'The QR code is its payload and a link to its PNG (`qr.imageUrl`), not the image.',
    params: txidParamsSchema,
    ok: [{ status: 200, description: 'Current state', schema: depositStateResponseSchema }],
    errors: [400, 401, 404],
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
      'The same body again is 202 with the same flow; another body with the same transactionId is 409.',
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
];

export function buildOpenApiDocument() {
  const registry = new OpenAPIRegistry();
  registry.registerComponent('securitySchemes', 'apiKey', {
    type: 'http',
    scheme: 'bearer',
    description: 'Authorization: Bearer <api key>',
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
    for (const status of op.errors) {
      responses[status] = {
        description: errorText[status] ?? 'Error',
        content: { 'application/problem+json': { schema: problemSchema } },
      };
    }
    registry.registerPath({
      method: op.method,
      path: op.path,
      tags: [op.tag],
      summary: op.summary,
      description: op.description,
      security: op.public ? [] : [{ apiKey: [] }],
      request: {
        params: op.params,
        query: op.query,
        body: op.body ? { required: true, content: { 'application/json': { schema: op.body } } } : undefined,
      },
      responses: responses as Parameters<typeof registry.registerPath>[0]['responses'],
    });
  }
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: '3.1.0',
    info: {
      title: 'pixflow API',
      version: '1.0.0',
      description:
        'Onboarding (KYC + liveness), Pix deposits and withdrawals as durable workflows. Amounts are integer centavos. Errors are application/problem+json (RFC 9457).',
    },
    servers: [{ url: '/' }],
  });
}

type Doc = ReturnType<typeof buildOpenApiDocument>;

/** The few fields of a generated operation the page shows. */
interface DocOperation {
  summary?: string;
  description?: string;
  parameters?: {
    name: string;
    in: string;
    required?: boolean;
    description?: string;
    schema?: { description?: string };
  }[];
  requestBody?: { content?: Record<string, { schema?: unknown }> };
  responses?: Record<string, { description?: string; content?: Record<string, unknown> }>;
}

/** A small static page: every operation, its parameters, body schema and responses. */
export function renderDocsHtml(doc: Doc): string {
  const sections: string[] = [];
  for (const [path, item] of Object.entries(doc.paths ?? {})) {
    for (const method of ['get', 'post'] as const) {
      const op = (item as Partial<Record<'get' | 'post', DocOperation>> | undefined)?.[method];
      if (!op) continue;
      const params = (op.parameters ?? []).map(
        (p) =>
          `<tr><td><code>${esc(p.name)}</code></td><td>${esc(p.in)}</td><td>${p.required ? 'yes' : ''}</td><td><code>${esc(JSON.stringify(p.schema))}</code></td><td>${esc(p.schema?.description ?? p.description)}</td></tr>`,
      );
      const body = op.requestBody?.content?.['application/json']?.schema;
      const responses = Object.entries(op.responses ?? {}).map(
        ([code, r]) =>
          `<li><b>${esc(code)}</b> ${esc(r.description)} <small>${esc(Object.keys(r.content ?? {}).join(', '))}</small></li>`,
      );
      sections.push(`<section id="${esc(`${method}-${path}`)}">
<h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code></h3>
<p>${esc(op.summary)}</p>${op.description ? `<p class="d">${esc(op.description)}</p>` : ''}
${params.length ? `<table><tr><th>parameter</th><th>in</th><th>required</th><th>schema</th><th></th></tr>${params.join('')}</table>` : ''}
${body ? `<details><summary>request body</summary><pre>${esc(JSON.stringify(body, null, 2))}</pre></details>` : ''}
<ul>${responses.join('')}</ul></section>`);
    }
  }
  const schemas = Object.entries(doc.components?.schemas ?? {}).map(
    ([name, s]) =>
      `<details id="schema-${esc(name)}"><summary>${esc(name)}</summary><pre>${esc(JSON.stringify(s, null, 2))}</pre></details>`,
  );
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(doc.info.title)}</title>
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:960px;margin:2em auto;padding:0 1em;color:#222}
code,pre{font:13px ui-monospace,monospace}pre{background:#f5f5f5;padding:.8em;overflow:auto}
section{border-top:1px solid #ddd;padding:.5em 0}.m{color:#fff;padding:2px 6px;border-radius:3px;font-size:12px}
.get{background:#2b7bb9}.post{background:#3a8f3a}.d{color:#555}table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}</style>
</head><body><h1>${esc(doc.info.title)} <small>${esc(doc.info.version)}</small></h1>
<p>${esc(doc.info.description)}</p><p>Every <code>/v1</code> route needs <code>Authorization: Bearer &lt;api key&gt;</code>. Machine-readable: <a href="/openapi.json">/openapi.json</a>.</p>
${sections.join('\n')}<h2>Schemas</h2>${schemas.join('\n')}</body></html>`;
}

export function openApiRoutes() {
  const doc = buildOpenApiDocument();
  const html = renderDocsHtml(doc);
  const r = Router();
  r.get('/openapi.json', (_req, res) => {
    res.json(doc);
  });
  r.get('/docs', (_req, res) => {
    res.type('html').send(html);
  });
  return r;
}
