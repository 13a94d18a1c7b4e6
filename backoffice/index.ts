import path from 'node:path';
import express, { Router } from 'express';
import helmet from 'helmet';
import { temporalDeadline } from '../http/temporal-deadline';
import { alertRoutes } from './alerts';
import { apiKeyRoutes } from './api-keys';
import { auditRoutes } from './audit';
import { brandRoutes } from './brands';
import { caseRoutes } from './cases';
import { connectorRoutes } from './connectors';
import { customerDecisionRoutes } from './customer-decisions';
import { decisionRoutes } from './decisions';
import type { BackofficeDeps } from './deps';
import { wellFormedInput } from './forms';
import { languageRoutes } from './language';
import { operatorRoutes } from './operators';
import { payoutRoutes } from './payouts';
import { policyRoutes } from './policy';
import { queueRoutes } from './queues';
import { errorPages, unavailablePage } from './render';
import { reversalRoutes } from './reversals';
import { searchRoutes } from './search';
import { backofficeSession, csrfProtection, formToken, loadOperator, requireOperator } from './session';
import { signInRoutes } from './sign-in';

// The back office at /backoffice: server-rendered pages (Eta, Pico CSS, htmx for the live parts)
// where operators work the queues and decide cases. Its own session and CSP; nothing of /v1.

const assets: Record<string, string> = {
  'pico.min.css': require.resolve('@picocss/pico/css/pico.min.css'),
  'htmx.min.js': require.resolve('htmx.org/dist/htmx.min.js'),
  'backoffice.css': path.join(__dirname, 'assets', 'backoffice.css'),
};

export function backofficeRoutes(deps: BackofficeDeps) {
  const r = Router();
  r.use(
    helmet.contentSecurityPolicy({
      useDefaults: false,
      directives: {
        defaultSrc: ["'none'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        formAction: ["'self'"],
        baseUri: ["'none'"],
        frameAncestors: ["'none'"],
      },
    }),
  );
  r.get('/assets/:name', (req, res, next) => {
    const file = assets[req.params.name ?? ''];
    if (!file) return next();
    res.sendFile(file, { maxAge: '1h' });
  });
  r.use(express.urlencoded({ extended: false, limit: '16kb', parameterLimit: 20 }));
  r.use(wellFormedInput);
  r.use(backofficeSession(deps.config, deps.pool, deps.log));
  r.use(
    loadOperator(deps.pool, {
      idleMs: deps.config.BACKOFFICE_SESSION_TTL_MS,
      maxAgeMs: deps.config.BACKOFFICE_SESSION_MAX_AGE_MS,
    }),
  );
  r.use(formToken);
  r.use((req, res, next) => (req.method === 'POST' ? csrfProtection(req, res, next) : next()));
  r.use(signInRoutes(deps.config, deps.pool));
  r.use(languageRoutes(deps.pool));
  r.use(requireOperator);
  r.use(temporalDeadline(deps.temporal, deps.config.TEMPORAL_CALL_TIMEOUT_MS, unavailablePage));
  // Before the queues: the payout queues have pages of their own.
  r.use(payoutRoutes(deps));
  r.use(queueRoutes(deps));
  r.use(reversalRoutes(deps));
  r.use(caseRoutes(deps));
  r.use(searchRoutes(deps));
  r.use(decisionRoutes(deps));
  r.use(customerDecisionRoutes(deps));
  r.use(alertRoutes(deps));
  r.use(auditRoutes(deps));
  r.use(apiKeyRoutes(deps));
  r.use(policyRoutes(deps));
  r.use(connectorRoutes(deps));
  r.use(operatorRoutes(deps));
  r.use(brandRoutes(deps));
  r.use((req, _res, next) => next(Object.assign(new Error(`no page at ${req.path}`), { status: 404 })));
  r.use(errorPages(deps.log));
  return r;
}
