import path from 'node:path';
import { Router } from 'express';
import { escapeHtml as esc } from '../common/html';
import { buildOpenApiDocument } from './openapi';

// /openapi.json serves the document; /docs renders it with Scalar's API reference, whose bundle
// the API serves itself (no CDN: the machines running this may reach no internet).

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

export function apiReferenceRoutes() {
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
