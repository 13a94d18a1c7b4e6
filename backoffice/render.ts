import path from 'node:path';
import { Eta } from 'eta';
import type { ErrorRequestHandler, Request, Response } from 'express';
import type { Logger } from '../common/logger';
import type { Operator } from '../db/operators';
import { isTemporalUnavailable, UNAVAILABLE_RETRY_AFTER_S } from '../http/problem';
import { formatterFor } from './format';

// Server-rendered pages: Eta templates (every value escaped unless a template says otherwise),
// each given who is signed in, the form token and the formatter for their zone.

declare module 'express-session' {
  interface SessionData {
    operatorId?: number;
    /** The operator's session generation when they signed in (db/operators.ts). */
    generation?: number;
    /** When they signed in (epoch ms): the session's absolute lifetime counts from here. */
    signedInAt?: number;
    flash?: { kind: 'ok' | 'error'; text: string };
  }
}

const eta = new Eta({ views: path.join(__dirname, 'views'), autoEscape: true, cache: true });

const DEFAULT_ZONE = 'America/Sao_Paulo';

export const operatorOf = (res: Response): Operator | undefined =>
  res.locals.operator as Operator | undefined;

export function signedIn(res: Response): Operator {
  const operator = operatorOf(res);
  if (!operator) throw new Error('a page behind sign-in rendered without an operator');
  return operator;
}

/** Renders `view` with what every page shows; a flash message left by a redirect shows once. */
export function page(req: Request, res: Response, view: string, data: Record<string, unknown>, status = 200) {
  const operator = operatorOf(res);
  const flash = req.session?.flash;
  if (flash && req.session) delete req.session.flash;
  const html = eta.render(`./${view}`, {
    operator,
    csrf: res.locals.csrf,
    fmt: formatterFor(operator?.timeZone ?? DEFAULT_ZONE),
    flash,
    ...data,
  });
  res.status(status).type('html').set('cache-control', 'no-store').send(html);
}

/** A refusal the operator reads: what went wrong, which fields, and that nothing changed. */
export class BackofficeError extends Error {
  constructor(
    readonly status: number,
    readonly heading: string,
    message: string,
    readonly fields: Array<{ name: string; reason: string }> = [],
    readonly back?: string,
  ) {
    super(message);
  }
}

export const notFoundPage = (what: string) =>
  new BackofficeError(404, 'Not found', `There is no ${what}. It may have been mistyped.`);

/** 503: Temporal, or the flow's worker, did not answer in time; a decision sent may have landed. */
export function unavailablePage(req: Request, res: Response): void {
  res.set('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
  page(
    req,
    res,
    'error',
    {
      heading: 'Temporal is not answering',
      message:
        'pixflow could not reach the flow in time. Reload the case in a moment: a decision you sent may have been recorded.',
      maybeChanged: true,
    },
    503,
  );
}

export function errorPages(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    // Already answered (503 at the request's deadline): what the handler met after it is moot.
    if (res.headersSent) return;
    if (isTemporalUnavailable(err)) return unavailablePage(req, res);
    if (err instanceof BackofficeError) {
      page(
        req,
        res,
        'error',
        { heading: err.heading, message: err.message, fields: err.fields, back: err.back },
        err.status,
      );
      return;
    }
    // Body parsing: a malformed or oversized form is the sender's doing.
    const status =
      typeof err?.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) log.error({ err, path: req.path }, 'back office request failed');
    page(
      req,
      res,
      'error',
      {
        heading: status === 500 ? 'Something went wrong' : 'Request refused',
        message:
          status === 500 ? 'pixflow could not answer; try again in a moment.' : String(err?.message ?? err),
      },
      status,
    );
  };
}

/**
 * Redirects once the session is in the store: express-session saves it while the answer goes
 * out, and a browser follows a redirect on its headers, so the next page could read the old one.
 */
export function redirectSaved(req: Request, res: Response, to: string): Promise<void> {
  return new Promise((resolve, reject) => {
    req.session.save((err) => {
      if (err) return reject(err);
      res.redirect(303, to);
      resolve();
    });
  });
}
