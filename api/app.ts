import type { Client } from '@temporalio/client';
import express from 'express';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import type { Pool } from '../db/pool';
import type { FlowTimings } from '../workflows/inputs';
import { apiKeyAuth } from './auth';
import { ingressRouter } from './ingress/router';
import { openApiRoutes } from './openapi';
import { Problem, problemHandler } from './problem';
import { depositRoutes } from './routes/deposits';
import { flowRoutes } from './routes/flows';
import { healthRoutes } from './routes/health';
import { onboardingRoutes } from './routes/onboardings';
import { withdrawalRoutes } from './routes/withdrawals';

export interface ApiDeps {
  config: Config;
  temporal: Client;
  pool: Pool;
  log: Logger;
  /** Overrides of the flows' waits (tests); never taken from a request. */
  timings?: Partial<FlowTimings>;
}

export function createApp(deps: ApiDeps) {
  const app = express();
  app.disable('x-powered-by');

  // Public: health and the API description.
  app.use(healthRoutes(deps));
  app.use(openApiRoutes());

  // Backend API: every route behind an API key.
  const v1 = express.Router();
  v1.use(apiKeyAuth(deps.config.API_KEYS ?? []));
  v1.use(express.json({ limit: '64kb' }));
  v1.use(onboardingRoutes(deps));
  v1.use(depositRoutes(deps));
  v1.use(withdrawalRoutes(deps));
  v1.use(flowRoutes(deps));
  app.use('/v1', v1);
  app.use(ingressRouter(deps));

  app.use((req, _res, next) =>
    next(new Problem(404, 'not-found', 'Not found', `no route for ${req.method} ${req.path}`)),
  );
  app.use(problemHandler(deps.log));
  return app;
}
