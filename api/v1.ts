import express, { type Router } from 'express';
import { apiKeyAuth } from '../api-keys/authenticate';
import { keyDirectory } from '../api-keys/directory';
import { apiRateLimit } from '../api-keys/rate-limit';
import { endpointOperations, webhookEndpointRoutes } from '../events/endpoint-routes';
import { eventOperations, eventRoutes } from '../events/event-routes';
import { failedAuthLimit } from '../http/failed-auth';
import type { Operation } from '../http/operation';
import { answerUnavailable } from '../http/problem';
import { temporalDeadline } from '../http/temporal-deadline';
import { biometricsOperations, biometricsRoutes } from './biometrics';
import { customerOperations, customerRoutes } from './customers';
import { depositOperations, depositRoutes } from './deposits';
import type { ApiDeps } from './deps';
import { flowOperations, flowRoutes } from './flows';
import { onboardingOperations, onboardingRoutes } from './onboardings';
import { assertEveryRouteDescribed, requireScopes, scopesByRoute } from './route-scopes';
import { withdrawalOperations, withdrawalRoutes } from './withdrawals';

/**
 * Each /v1 surface: its operations and the router that serves them, in the order /openapi.json
 * lists them and the API mounts them. One list for both, so what is described and what is served
 * cannot drift apart.
 */
const surfaces: readonly { operations: Record<string, Operation>; routes: (deps: ApiDeps) => Router }[] = [
  { operations: onboardingOperations, routes: onboardingRoutes },
  { operations: biometricsOperations, routes: biometricsRoutes },
  { operations: depositOperations, routes: depositRoutes },
  { operations: withdrawalOperations, routes: withdrawalRoutes },
  { operations: flowOperations, routes: flowRoutes },
  { operations: customerOperations, routes: customerRoutes },
  { operations: endpointOperations, routes: webhookEndpointRoutes },
  { operations: eventOperations, routes: eventRoutes },
];

/** Every /v1 operation, in the order /openapi.json lists them. */
export const v1Operations: readonly Operation[] = surfaces.flatMap(({ operations }) =>
  Object.values(operations),
);

/** What each /v1 route needs of the API key. */
export const routeScopes = scopesByRoute(v1Operations);

/** The backend API, to mount at /v1: every route behind an API key holding the route's scopes. */
export function v1Routes(deps: ApiDeps): Router {
  const v1 = express.Router();
  const failures = failedAuthLimit({
    surface: 'api',
    limit: deps.config.AUTH_FAILURE_LIMIT,
    windowMs: deps.config.AUTH_FAILURE_WINDOW_MS,
    metrics: deps.metrics,
  });
  // An address that failed too often waits before its key is even looked at.
  v1.use(failures.refuseWhileLimited);
  v1.use(
    apiKeyAuth({
      bootstrapKeys: deps.config.API_KEYS ?? [],
      directory: keyDirectory(deps.pool, { ttlMs: deps.config.API_KEY_CACHE_MS, log: deps.log }),
      failures,
    }),
  );
  v1.use(apiRateLimit(deps.config.API_RATE_LIMIT_PER_MINUTE));
  // Before the body is read: a key without the scope costs nothing more.
  v1.use(requireScopes(v1Operations));
  v1.use(express.json({ limit: '64kb' }));
  v1.use(temporalDeadline(deps.temporal, deps.config.TEMPORAL_CALL_TIMEOUT_MS, answerUnavailable));
  for (const { routes } of surfaces) v1.use(routes(deps));
  assertEveryRouteDescribed(v1, v1Operations);
  return v1;
}
