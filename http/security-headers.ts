import type { RequestHandler } from 'express';
import helmet from 'helmet';

/**
 * helmet's headers with a CSP for what pixflow serves: JSON and PNGs (/docs sets its own, for the
 * reference's script). Nothing may frame it. The UI's codec calls are CORS requests, which
 * Cross-Origin-Resource-Policy does not block.
 */
export function securityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
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
