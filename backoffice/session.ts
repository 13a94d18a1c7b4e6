import connectPgSimple from 'connect-pg-simple';
import { csrfSync } from 'csrf-sync';
import type { Request, RequestHandler } from 'express';
import session from 'express-session';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import { grantedBrands } from '../db/operator-brands';
import { getOperator, type Operator } from '../db/operators';
import type { Pool } from '../db/pool';
import { BackofficeError } from './render';

// Who is signed in: an express-session whose data lives in Postgres (any API process answers any
// operator), a cookie that scripts cannot read and other sites do not send, and a synchronizer
// token on every form.

export const SESSION_COOKIE = 'pixflow_bo';

export function backofficeSession(config: Config, pool: Pool, log: Logger): RequestHandler {
  const PgStore = connectPgSimple(session);
  return session({
    name: SESSION_COOKIE,
    secret: config.BACKOFFICE_SESSION_SECRET,
    store: new PgStore({
      pool,
      tableName: 'backoffice_sessions',
      // Expired sessions are deleted every 15 minutes or so (randomized across API processes).
      pruneSessionInterval: 15 * 60,
      errorLog: (msg: string, err?: unknown) => log.warn({ err }, `back office sessions: ${msg}`),
    }),
    resave: false,
    saveUninitialized: false,
    rolling: true,
    cookie: {
      httpOnly: true,
      sameSite: 'strict',
      secure: config.BACKOFFICE_SECURE_COOKIE,
      path: '/backoffice',
      maxAge: config.BACKOFFICE_SESSION_TTL_MS,
    },
  });
}

const csrf = csrfSync({
  // Forms send it as a field, htmx requests as a header.
  getTokenFromRequest: (req) =>
    (typeof req.body?._csrf === 'string' ? req.body._csrf : undefined) ?? req.header('x-csrf-token'),
});

/** Every state-changing request must carry the session's form token. */
export const csrfProtection: RequestHandler = (req, res, next) => {
  csrf.csrfSynchronisedProtection(req, res, (err?: unknown) => {
    if (!err) return next();
    next(
      new BackofficeError(403, (t) => ({ heading: t.errors.formExpired, message: t.errors.formExpiredText })),
    );
  });
};

/** The form token pages put in their forms. */
export const formToken: RequestHandler = (req, res, next) => {
  res.locals.csrf = csrf.generateToken(req);
  next();
};

/** A new token after signing in or out: one seen before cannot be used after. */
export const newFormToken = (req: Parameters<RequestHandler>[0]) => csrf.generateToken(req, true);

/** What sign-in writes in the session: who, under which of their session generations, and when. */
export function startOperatorSession(req: Request, operator: Operator) {
  req.session.operatorId = operator.id;
  req.session.generation = operator.sessionGeneration;
  req.session.signedInAt = Date.now();
}

/**
 * The signed-in operator on res.locals, read again on every request: a session is over once the
 * operator is disabled, their password, role or enabled state changed since it began (another
 * generation), or it is older than `maxAgeMs` however busy it was. An ended session keeps nothing
 * of the operator.
 */
export function loadOperator(
  pool: Pool,
  { idleMs, maxAgeMs }: { idleMs: number; maxAgeMs: number },
): RequestHandler {
  return async (req, res, next) => {
    const s = req.session;
    if (s.operatorId === undefined) return next();
    const operator = await getOperator(pool, s.operatorId);
    const left = s.signedInAt === undefined ? 0 : s.signedInAt + maxAgeMs - Date.now();
    if (operator && !operator.disabled && s.generation === operator.sessionGeneration && left > 0) {
      res.locals.operator = operator;
      // The brands this operator sees, read with them on every request: a revocation counts at once.
      res.locals.granted = operator.role === 'admin' ? 'all' : await grantedBrands(pool, operator.id);
      // The cookie and the stored row expire at the absolute end too, not only when idle.
      s.cookie.maxAge = Math.min(idleMs, left);
      return next();
    }
    delete s.operatorId;
    delete s.generation;
    delete s.signedInAt;
    next();
  };
}

/** Pages and actions behind sign-in: a page asks to sign in first, an action is refused. */
export const requireOperator: RequestHandler = (req, res, next) => {
  if (res.locals.operator) return next();
  if (req.method === 'GET' || req.method === 'HEAD')
    return res.redirect(303, `/backoffice/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
  next(new BackofficeError(401, (t) => ({ heading: t.errors.signedOut, message: t.errors.signedOutText })));
};
