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

/** Every /v1 operation, in the order /openapi.json lists them. */
export const v1Operations: readonly Operation[] = [
  ...Object.values(onboardingOperations),
  ...Object.values(biometricsOperations),
  ...Object.values(depositOperations),
  ...Object.values(withdrawalOperations),
  ...Object.values(flowOperations),
  ...Object.values(customerOperations),
  ...Object.values(endpointOperations),
  ...Object.values(eventOperations),
];

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
  v1.use(onboardingRoutes(deps));
  v1.use(biometricsRoutes(deps));
  v1.use(depositRoutes(deps));
  v1.use(withdrawalRoutes(deps));
  v1.use(flowRoutes(deps));
  v1.use(customerRoutes(deps));
  v1.use(webhookEndpointRoutes(deps));
  v1.use(eventRoutes(deps));
  assertEveryRouteDescribed(v1, v1Operations);
  return v1;
}
