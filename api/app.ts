import type { Client } from '@temporalio/client';
import express from 'express';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import type { Pool } from '../db/pool';
import { apiKeyAuth } from './auth';
import { Problem, problemHandler } from './problem';
import { healthRoutes } from './routes/health';

export interface ApiDeps {
  config: Config;
  temporal: Client;
  pool: Pool;
  log: Logger;
}

export function createApp(deps: ApiDeps) {
  const app = express();
  app.disable('x-powered-by');
  app.use(healthRoutes(deps));
  const v1 = express.Router();
  v1.use(apiKeyAuth(deps.config.API_KEYS ?? []));
  v1.use(express.json({ limit: '64kb' }));
  app.use('/v1', v1);
  app.use((req, _res, next) =>
    next(new Problem(404, 'not-found', 'Not found', `no route for ${req.method} ${req.path}`)),
  );
  app.use(problemHandler(deps.log));
  return app;
}
