import express, { type RequestHandler } from 'express';
import { apiKeyAuth } from '../api-keys/authenticate';
import { keyDirectory } from '../api-keys/directory';
import { apiRateLimit } from '../api-keys/rate-limit';
import { backofficeRoutes } from '../backoffice';
import { createApiMetrics } from '../common/metrics';
import type { FlowTimings } from '../contracts/shared';
import { countPending } from '../db/inbox';
import { webhookEndpointRoutes } from '../events/endpoint-routes';
import { eventRoutes } from '../events/event-routes';
import { failedAuthLimit } from '../http/failed-auth';
import { allowedMethods, requestObservability } from '../http/observability';
import { answerUnavailable, Problem, problemHandler, sendProblem } from '../http/problem';
import { requestTracing } from '../http/request-tracing';
import { securityHeaders } from '../http/security-headers';
import { temporalDeadline } from '../http/temporal-deadline';
import { ingressRouter } from '../ingress/router';
import { biometricsRoutes } from './biometrics';
import { codecRoutes } from './codec-endpoint';
import { customerRoutes } from './customers';
import { depositRoutes } from './deposits';
import type { ApiDeps } from './deps';
import { flowRoutes } from './flows';
import { healthRoutes } from './health';
import { onboardingRoutes } from './onboardings';
import { openApiRoutes } from './openapi';
import { assertEveryRouteScoped, requireScopes } from './route-scopes';
import { withdrawalRoutes } from './withdrawals';

/**
 * The flows' waits that configuration sets, with the caller's overrides on top; what neither
 * sets, the flow takes from its defaults. Undefined when nothing is set.
 */
function configuredTimings({ config, timings }: ApiDeps): Partial<FlowTimings> | undefined {
  const configured: Partial<FlowTimings> = {
    ...(config.LIVENESS_LINK_TTL_MS ? { livenessLinkTtlMs: config.LIVENESS_LINK_TTL_MS } : {}),
    ...(config.ONBOARDING_DEADLINE_MS ? { onboardingDeadlineMs: config.ONBOARDING_DEADLINE_MS } : {}),
    ...timings,
  };
  return Object.keys(configured).length > 0 ? configured : undefined;
}

/**
 * A path some route serves, asked with another method: 405 with the methods it takes (RFC 9110),
 * not 404. Its `instance` is the route's template, never the raw path (the webhook secret).
 */
const methodNotAllowed: RequestHandler = (req, res, next) => {
  const route = allowedMethods(req);
  if (!route || route.methods.includes(req.method) || route.methods.includes('*')) return next();
  const allow = route.methods.join(', ');
  res.set('allow', allow);
  sendProblem(
    res,
    new Problem(405, 'method-not-allowed', 'Method not allowed', `${req.method} is not one of ${allow}`),
    route.template,
  );
};

export function createApp(input: ApiDeps) {
  const metrics = input.metrics ?? createApiMetrics();
  metrics.measureBacklog(() => countPending(input.pool));
  const deps = { ...input, metrics, timings: configuredTimings(input) };
  const app = express();
  app.disable('x-powered-by');
  if (deps.config.TRUST_PROXY !== undefined) app.set('trust proxy', deps.config.TRUST_PROXY);
  app.use(securityHeaders());
  app.use(requestTracing());
  app.use(requestObservability(deps.log, metrics));

  // Public: health and the API description.
  app.use(healthRoutes(deps));
  app.use(openApiRoutes());
  app.get('/metrics', async (_req, res) => {
    res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
  if (deps.codec) {
    app.use(
      codecRoutes({
        codec: deps.codec,
        tokens: deps.config.CODEC_TOKENS ?? [],
        corsOrigins: deps.config.CODEC_CORS_ORIGINS,
        trustLoopbackUi: deps.config.CODEC_TRUST_LOOPBACK_UI,
      }),
    );
  }

  // Backend API: every route behind an API key holding the route's scopes.
  const v1 = express.Router();
  const failures = failedAuthLimit({
    surface: 'api',
    limit: deps.config.AUTH_FAILURE_LIMIT,
    windowMs: deps.config.AUTH_FAILURE_WINDOW_MS,
    metrics,
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
  v1.use(requireScopes());
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
  assertEveryRouteScoped(v1);
  app.use('/v1', v1);
  app.use(ingressRouter(deps));
  // Operators: pages behind a sign-in of their own.
  app.use('/backoffice', backofficeRoutes(deps));

  app.use(methodNotAllowed);
  app.use((req, _res, next) =>
    next(new Problem(404, 'not-found', 'Not found', `no route for ${req.method} ${req.path}`)),
  );
  app.use(problemHandler(deps.log));
  return app;
}
