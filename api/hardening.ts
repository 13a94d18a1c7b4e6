import type { RequestHandler } from 'express';
import helmet from 'helmet';

// Security headers on every answer, and the per-key rate limit of /v1.

/**
 * helmet's headers with a CSP for what pixflow serves: JSON, PNGs and /docs (one HTML page with
 * an inline <style>, no script). Nothing may frame it. The UI's codec calls are CORS requests,
 * which Cross-Origin-Resource-Policy does not block.
 */
export function securityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        styleSrc: ["'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        baseUri: ["'none'"],
        formAction: ["'none'"],
        frameAncestors: ["'none'"],
      },
    },
    strictTransportSecurity: false, // TLS ends in front of the API, which sets it there
    referrerPolicy: { policy: 'no-referrer' },
  });
}
