import connectPgSimple from 'connect-pg-simple';
import { csrfSync } from 'csrf-sync';
import type { RequestHandler } from 'express';
import session from 'express-session';
import type { Config } from '../../common/config';
import type { Logger } from '../../common/logger';
import { getOperator, type OperatorRole } from '../../db/operators';
import type { Pool } from '../../db/pool';
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
      new BackofficeError(
        403,
        'Form expired',
        'This form was not sent from a page of this back office, or your session changed since it was shown. Reload the page and try again.',
      ),
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

/** The signed-in operator on res.locals, read again on every request (a disabled one is out at once). */
export function loadOperator(pool: Pool): RequestHandler {
  return async (req, res, next) => {
    const id = req.session.operatorId;
    const operator = id === undefined ? undefined : await getOperator(pool, id);
    if (operator && !operator.disabled) res.locals.operator = operator;
    next();
  };
}

/** Pages and actions behind sign-in: a page asks to sign in first, an action is refused. */
export const requireOperator: RequestHandler = (req, res, next) => {
  if (res.locals.operator) return next();
  if (req.method === 'GET' || req.method === 'HEAD')
    return res.redirect(303, `/backoffice/sign-in?next=${encodeURIComponent(req.originalUrl)}`);
  next(new BackofficeError(401, 'Signed out', 'Your session ended. Sign in again; nothing was changed.'));
};

const rank: Record<OperatorRole, number> = { viewer: 0, reviewer: 1, admin: 2 };
export const roleAtLeast = (role: OperatorRole, least: OperatorRole) => rank[role] >= rank[least];
