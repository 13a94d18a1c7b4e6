import type { RequestHandler, Router } from 'express';
import { match } from 'path-to-regexp';
import { principalOf } from '../api-keys/authenticate';
import { grants, type Scope } from '../common/api-key';
import { routesOf } from '../http/observability';
import { type Operation, routeName, V1 } from '../http/operation';
import { Problem } from '../http/problem';

// What each /v1 route needs of the API key is said once, by its operation: the guard below
// enforces it, the OpenAPI document shows it, and docs/security.md's table is checked against it
// (test/api/api-keys.test.ts). A `write` scope includes its `read`. The API refuses to start if
// a /v1 route is served without an operation (assertEveryRouteDescribed), so none goes unguarded.

/** Each route's scopes, by its name (`GET /v1/deposits/:txid`). */
export const scopesByRoute = (operations: readonly Operation[]): Record<string, readonly Scope[]> =>
  Object.fromEntries(operations.map((op) => [routeName(op), op.scopes]));

/**
 * Behind apiKeyAuth on the /v1 router: 403 problem+json naming the scopes the key lacks. A path
 * no route serves is left to the 404 and 405 answers.
 */
export function requireScopes(operations: readonly Operation[]): RequestHandler {
  const entries = operations.map((op) => ({
    route: routeName(op),
    method: op.method.toUpperCase(),
    // Express's own matcher with its defaults, on the path below the /v1 mount, as the routes see it.
    matches: match(op.path, { decode: false }),
    scopes: op.scopes,
  }));
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

/** Throws unless every route of the /v1 router is an operation, and every operation a route. */
export function assertEveryRouteDescribed(v1: Router, operations: readonly Operation[]): void {
  const served = routesOf(v1, V1).flatMap(({ template, methods }) =>
    methods.filter((m) => m !== 'HEAD').map((m) => `${m.toUpperCase()} ${template}`),
  );
  const described = operations.map(routeName);
  const undescribed = served.filter((r) => !described.includes(r));
  const stale = described.filter((r) => !served.includes(r));
  if (undescribed.length || stale.length) {
    throw new Error(
      `/v1 routes without an operation (http/operation.ts route()) [${undescribed.join(', ')}], operations without a route [${stale.join(', ')}]`,
    );
  }
}
