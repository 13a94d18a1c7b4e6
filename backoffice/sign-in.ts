import { Router } from 'express';
import { ipKeyGenerator, rateLimit } from 'express-rate-limit';
import { z } from 'zod';
import type { Config } from '../common/config';
import { passwordMatches } from '../common/passwords';
import { type AuditReason, recordAction } from '../db/operator-actions';
import { operatorForSignIn } from '../db/operators';
import type { Pool } from '../db/pool';
import { operatorOf, page, redirectSaved, wordsOf } from './render';
import { newFormToken, startOperatorSession } from './session';

const signInSchema = z.object({
  email: z.string().trim().min(1).max(200),
  password: z.string().min(1).max(1000),
  next: z.string().optional(),
});

/** Only a page of the back office: never another site, never `//host`. */
export const safeNext = (next: unknown) =>
  typeof next === 'string' && /^\/backoffice(\/[^/\\]|$|\?)/.test(next) && !next.includes('//')
    ? next
    : '/backoffice';

/** The address a sign-in form carried, as far as it can be written down. */
const typedEmail = (body: unknown) => {
  const email = (body as { email?: unknown } | undefined)?.email;
  return typeof email === 'string' ? email.trim().toLowerCase().slice(0, 200) : '';
};

export function signInRoutes(config: Config, pool: Pool) {
  const r = Router();
  // Per address, counted only when the sign-in fails: guessing costs the same however it is spread.
  const limiter = rateLimit({
    windowMs: 15 * 60_000,
    limit: config.BACKOFFICE_SIGNIN_ATTEMPTS,
    skipSuccessfulRequests: true,
    standardHeaders: 'draft-8',
    legacyHeaders: false,
    // The client's address as TRUST_PROXY says to read it: the proxy's own when none is trusted.
    keyGenerator: (req) => ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? ''),
    // Refused unread: the address typed is written to the audit trail (a guess at whose account
    // is under attack), never the password, and no operator is looked up for it.
    handler: async (req, res) => {
      await recordAction(pool, {
        operatorId: null,
        operatorEmail: typedEmail(req.body) || '(none)',
        operatorRole: null,
        action: 'sign_in',
        outcome: 'refused',
        reason: 'sign_in_rate_limited' satisfies AuditReason,
      });
      page(
        req,
        res,
        'sign-in',
        {
          error: wordsOf(req, res).signIn.tooMany,
          next: safeNext(req.body?.next),
        },
        429,
      );
    },
  });

  r.get('/sign-in', (req, res) => {
    if (operatorOf(res)) return res.redirect(303, '/backoffice');
    page(req, res, 'sign-in', { next: safeNext(req.query.next) });
  });

  r.post('/sign-in', limiter, async (req, res, next) => {
    const form = signInSchema.safeParse(req.body ?? {});
    const email = form.success ? form.data.email.toLowerCase() : String(req.body?.email ?? '').slice(0, 200);
    const found = form.success ? await operatorForSignIn(pool, email) : undefined;
    const ok = form.success && (await passwordMatches(found?.passwordHash, form.data.password));
    if (!ok || !found || found.operator.disabled) {
      await recordAction(pool, {
        operatorId: found?.operator.id ?? null,
        operatorEmail: email || '(none)',
        operatorRole: found?.operator.role ?? null,
        action: 'sign_in',
        outcome: 'refused',
      });
      res.locals.csrf = newFormToken(req);
      // 401 makes the limiter count it; the same words whether the address exists or not.
      return page(
        req,
        res,
        'sign-in',
        { error: wordsOf(req, res).signIn.wrong, email, next: safeNext(req.body?.next) },
        401,
      );
    }
    // A new session id on sign-in: one planted before cannot ride along (session fixation).
    req.session.regenerate((err) => {
      if (err) return next(err);
      startOperatorSession(req, found.operator);
      newFormToken(req);
      recordAction(pool, {
        operatorId: found.operator.id,
        operatorEmail: found.operator.email,
        operatorRole: found.operator.role,
        action: 'sign_in',
        outcome: 'done',
      })
        .then(() => redirectSaved(req, res, safeNext(req.body?.next)))
        .catch(next);
    });
  });

  r.post('/sign-out', async (req, res, next) => {
    const operator = operatorOf(res);
    if (operator) {
      await recordAction(pool, {
        operatorId: operator.id,
        operatorEmail: operator.email,
        operatorRole: operator.role,
        action: 'sign_out',
        outcome: 'done',
      });
    }
    req.session.destroy((err) => {
      if (err) return next(err);
      res.redirect(303, '/backoffice/sign-in');
    });
  });
  return r;
}
