import express, { type RequestHandler } from 'express';
import { backofficeRoutes } from '../backoffice';
import { createApiMetrics } from '../common/metrics';
import { countPending } from '../db/inbox';
import { allowedMethods, requestObservability } from '../http/observability';
import { V1 } from '../http/operation';
import { Problem, problemHandler, sendProblem } from '../http/problem';
import { requestTracing } from '../http/request-tracing';
import { securityHeaders } from '../http/security-headers';
import { ingressRouter } from '../ingress/router';
import { configuredTimings } from '../starters/types';
import { apiReferenceRoutes } from './api-reference';
import { codecRoutes } from './codec-endpoint';
import type { ApiDeps } from './deps';
import { healthRoutes } from './health';
import { v1Routes } from './v1';

// The API process: the backend API (/v1), the provider's webhook ingress, the operators' back
// office, health, the API's description and the Temporal UI's codec endpoint, on one Express app.

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
  const deps = { ...input, metrics, timings: configuredTimings(input.config, input.timings) };
  const app = express();
  app.disable('x-powered-by');
  if (deps.config.TRUST_PROXY !== undefined) app.set('trust proxy', deps.config.TRUST_PROXY);
  app.use(securityHeaders());
  app.use(requestTracing());
  app.use(requestObservability(deps.log, metrics));

  // Public: health and the API description.
  app.use(healthRoutes(deps));
  app.use(apiReferenceRoutes());
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
  app.use(V1, v1Routes(deps));
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
