import type { RequestHandler, Router } from 'express';
import { match } from 'path-to-regexp';
import { principalOf } from '../api-keys/authenticate';
import { grants, type Scope } from '../common/api-key';
import { routesOf } from '../http/observability';
import { Problem } from '../http/problem';

// What each /v1 route needs of the API key, in one place: the guard below enforces it, the
// OpenAPI document shows it per operation, and docs/security.md's table is checked against it
// (test/api/api-keys.test.ts). A `write` scope includes its `read`. The API refuses to start if
// a /v1 route is missing here (assertEveryRouteScoped), so none can go unguarded.

export const routeScopes = {
  'POST /v1/onboardings': ['onboardings:write'],
  'GET /v1/onboardings/:cpf': ['onboardings:read'],
  'POST /v1/onboardings/:cpf/liveness-link': ['onboardings:write'],
  'GET /v1/onboardings/:cpf/liveness-link/qrcode.png': ['onboardings:read'],
  'POST /v1/onboardings/:cpf/review': ['onboardings:write'],
  // A biometric identification is the identity check of an onboarded person.
  'GET /v1/biometrics/:cpf': ['onboardings:read'],
  'POST /v1/deposits': ['deposits:write'],
  'GET /v1/deposits/:txid': ['deposits:read'],
  'POST /v1/deposits/:txid/resolution': ['deposits:write'],
  'GET /v1/deposits/:txid/qrcode.png': ['deposits:read'],
  'POST /v1/withdrawals': ['withdrawals:write'],
  'GET /v1/withdrawals/:id': ['withdrawals:read'],
  'GET /v1/withdrawals/:id/biometrics-link/qrcode.png': ['withdrawals:read'],
  'GET /v1/withdrawals/:id/receipt.png': ['withdrawals:read'],
  // Lists every flow type, whatever its filters: it reads what each of the three reads.
  'GET /v1/flows': ['onboardings:read', 'deposits:read', 'withdrawals:read'],
  'GET /v1/customers/:cpf': ['customers:read'],
  'GET /v1/customers/:cpf/accounts': ['customers:read'],
  'POST /v1/customers/:cpf/accounts': ['customers:write'],
  'DELETE /v1/customers/:cpf/accounts/:id': ['customers:write'],
  // An endpoint receives the events it subscribes to: subscribing reads them.
  'POST /v1/webhook-endpoints': ['webhooks:write', 'events:read'],
  'GET /v1/webhook-endpoints': ['webhooks:read'],
  'GET /v1/webhook-endpoints/:id': ['webhooks:read'],
  'PATCH /v1/webhook-endpoints/:id': ['webhooks:write', 'events:read'],
  'DELETE /v1/webhook-endpoints/:id': ['webhooks:write'],
  'POST /v1/webhook-endpoints/:id/rotate-secret': ['webhooks:write'],
  'GET /v1/webhook-endpoints/:id/attempts': ['webhooks:read'],
  'GET /v1/events': ['events:read'],
  'GET /v1/events/:id': ['events:read'],
  'POST /v1/events/:id/redeliver': ['events:write'],
} as const satisfies Record<string, readonly Scope[]>;

export type ScopedRoute = keyof typeof routeScopes;

/** The scopes of an operation, by its method and its Express path template; undefined when none is listed. */
export function scopesOf(method: string, template: string): readonly Scope[] | undefined {
  return (routeScopes as Record<string, readonly Scope[]>)[`${method.toUpperCase()} ${template}`];
}

const V1 = '/v1';

/**
 * Behind apiKeyAuth on the /v1 router: 403 problem+json naming the scopes the key lacks. A path
 * no route serves is left to the 404 and 405 answers.
 */
export function requireScopes(): RequestHandler {
  const entries = Object.entries(routeScopes).map(([route, scopes]) => {
    const [method = '', path = ''] = route.split(' ');
    // Express's own matcher with its defaults, on the path below the /v1 mount, as the routes see it.
    return { route, method, matches: match(path.slice(V1.length), { decode: false }), scopes };
  });
  return (req, res, next) => {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const entry = entries.find((e) => e.method === method && e.matches(req.path) !== false);
    if (!entry) return next();
    const { scopes: held } = principalOf(res);
    const missing = entry.scopes.filter((s) => !grants(held, s));
    if (missing.length === 0) return next();
    next(
      new Problem(
        403,
        'insufficient-scope',
        'Insufficient scope',
        `this API key lacks ${missing.join(', ')}, which ${entry.route} needs`,
        { required_scopes: entry.scopes, missing_scopes: missing },
      ),
    );
  };
}

/** Throws unless every route of the /v1 router has its scopes listed, and every listing a route. */
export function assertEveryRouteScoped(v1: Router): void {
  const served = routesOf(v1, V1).flatMap(({ template, methods }) =>
    methods.filter((m) => m !== 'HEAD').map((m) => `${m.toUpperCase()} ${template}`),
  );
  const unscoped = served.filter((r) => !(r in routeScopes));
  const stale = Object.keys(routeScopes).filter((r) => !served.includes(r));
  if (unscoped.length || stale.length) {
    throw new Error(
      `api/route-scopes.ts is out of date: routes without scopes [${unscoped.join(', ')}], scopes without a route [${stale.join(', ')}]`,
    );
  }
}
