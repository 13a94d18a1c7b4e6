import path from 'node:path';
import { Eta } from 'eta';
import type { ErrorRequestHandler, Request, Response } from 'express';
import type { Logger } from '../common/logger';
import type { Operator } from '../db/operators';
import { isDatabaseUnavailable, isTemporalUnavailable, UNAVAILABLE_RETRY_AFTER_S } from '../http/problem';
import { formatterFor } from './format';
import { type Catalog, catalogFor, DEFAULT_LANGUAGE, isLanguage, type Language, labelsFor } from './i18n';
import { menuFor } from './menu';

// Server-rendered pages: Eta templates (every value escaped unless a template says otherwise),
// each given who is signed in, the form token, the words of the operator's language and the
// formatter for their language and zone.

declare module 'express-session' {
  interface SessionData {
    operatorId?: number;
    /** The operator's session generation when they signed in (db/operators.ts). */
    generation?: number;
    /** When they signed in (epoch ms): the session's absolute lifetime counts from here. */
    signedInAt?: number;
    flash?: { kind: 'ok' | 'error'; text: string };
    /** The language chosen before signing in; once signed in, the operator's own is used. */
    language?: Language;
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

/**
 * The language of this request's pages: the signed-in operator's; before signing in, the one
 * chosen on the page, else the browser's (Accept-Language), else Brazilian Portuguese.
 */
export function languageOf(req: Request, res: Response): Language {
  const operator = operatorOf(res);
  if (operator) return operator.language;
  const chosen = req.session?.language;
  if (isLanguage(chosen)) return chosen;
  // No header at all reads as "any": the first offered, pt-BR.
  const accepted = req.acceptsLanguages(DEFAULT_LANGUAGE, 'en');
  return isLanguage(accepted) ? accepted : DEFAULT_LANGUAGE;
}

/** The words of this request's language. */
export const wordsOf = (req: Request, res: Response): Catalog => catalogFor(languageOf(req, res));

/** Renders `view` with what every page shows; a flash message left by a redirect shows once. */
export function page(req: Request, res: Response, view: string, data: Record<string, unknown>, status = 200) {
  const operator = operatorOf(res);
  const flash = req.session?.flash;
  if (flash && req.session) delete req.session.flash;
  const lang = languageOf(req, res);
  const html = eta.render(`./${view}`, {
    operator,
    csrf: res.locals.csrf,
    t: catalogFor(lang),
    label: labelsFor(lang),
    fmt: formatterFor(operator?.timeZone ?? DEFAULT_ZONE, lang),
    zone: operator?.timeZone ?? DEFAULT_ZONE,
    menu: operator ? menuFor(operator.role) : [],
    // Where the language switch comes back to: this page, when asking for it again is harmless.
    here: req.method === 'GET' ? req.originalUrl : '/backoffice',
    flash,
    ...data,
  });
  res
    .status(status)
    .type('html')
    .set('cache-control', 'no-store')
    .set('content-language', lang)
    .vary('accept-language')
    .send(html);
}

/** What a refusal says, in the words of the page it is shown on. */
type Say = (t: Catalog) => { heading: string; message: string };

/** A refusal the operator reads: what went wrong, which fields, and that nothing changed. */
export class BackofficeError extends Error {
  constructor(
    readonly status: number,
    readonly say: Say,
    readonly fields: Array<{ name: string; label: string; reason: string }> = [],
    readonly back?: string,
  ) {
    super(say(catalogFor('en')).message);
  }
}

export const notFoundPage = (what: (t: Catalog) => string) =>
  new BackofficeError(404, (t) => ({ heading: t.errors.notFound, message: t.errors.notFoundText(what(t)) }));

/**
 * 503: Temporal, or the flow's worker, did not answer in time, or Postgres is restarting or out
 * of reach; a decision sent may have landed.
 */
export function unavailablePage(
  req: Request,
  res: Response,
  what: 'temporal' | 'database' = 'temporal',
): void {
  res.set('retry-after', String(UNAVAILABLE_RETRY_AFTER_S));
  const t = wordsOf(req, res);
  const text =
    what === 'database'
      ? { heading: t.errors.databaseUnavailable, message: t.errors.databaseUnavailableText }
      : { heading: t.errors.unavailable, message: t.errors.unavailableText };
  page(req, res, 'error', { ...text, maybeChanged: true }, 503);
}

export function errorPages(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    // Already answered (503 at the request's deadline): what the handler met after it is moot.
    if (res.headersSent) return;
    if (isTemporalUnavailable(err)) return unavailablePage(req, res);
    if (isDatabaseUnavailable(err)) {
      log.warn(
        { code: err.code, message: err.message, path: req.path },
        'database unavailable: answered 503',
      );
      return unavailablePage(req, res, 'database');
    }
    const t = wordsOf(req, res);
    if (err instanceof BackofficeError) {
      page(req, res, 'error', { ...err.say(t), fields: err.fields, back: err.back }, err.status);
      return;
    }
    // Body parsing: a malformed or oversized form is the sender's doing.
    const status =
      typeof err?.status === 'number' && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (status === 500) log.error({ err, path: req.path }, 'back office request failed');
    const text =
      status === 500
        ? { heading: t.errors.failed, message: t.errors.failedText }
        : status === 404
          ? { heading: t.errors.notFound, message: t.errors.notFoundText(t.errors.what.page(req.path)) }
          : { heading: t.errors.refused, message: status === 413 ? t.errors.tooLarge : t.errors.refusedText };
    page(req, res, 'error', text, status);
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
