import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import { tokenRequestSchema } from '../../connectors/identity-payments/wire/schemas';
import type { SandboxContext } from '../context';
import { sideOf } from '../dialect';
import { faultGate, parseBody, sendError } from '../http';

// POST /oauth2/token (form-encoded client credentials). A bad form or grant_type is a 400; the
// "not shown" answers follow the dialect: `token.errors` (wrong credentials 401, or 400
// `invalid_client` as OAuth 2.0 spells it; the rate limit 429, or 403, both with Retry-After) and
// `token.expires_in` (a number, or its decimal text).

export function tokenRoutes(ctx: SandboxContext): Router {
  const router = Router();
  router.post('/oauth2/token', faultGate(ctx, 'token'), (req, res) => {
    const { state, options } = ctx;
    state.counters.tokenRequests += 1;
    const now = options.now();
    const { faults } = state;
    const windowStart = now - options.tokenRateLimit.windowMs;
    state.tokenIssueTimes = state.tokenIssueTimes.filter((t) => t > windowStart);
    const injected = faults.tokenRateLimitNext > 0;
    const full = state.tokenIssueTimes.length >= options.tokenRateLimit.max;
    if (injected || full) {
      if (injected) faults.tokenRateLimitNext -= 1;
      // A full window frees a slot when its oldest token leaves it: asking again sooner is refused
      // again. The fault knob's 429 says what the knob says.
      const oldest = state.tokenIssueTimes[0];
      const untilFree = full && oldest !== undefined ? Math.ceil((oldest - windowStart) / 1000) : 0;
      const retryAfter = Math.max(injected ? faults.retryAfterSeconds : 0, untilFree);
      res.set('retry-after', String(Math.max(1, retryAfter)));
      if (sideOf(ctx, 'token.errors') === 'doc')
        sendError(res, 429, 'Too Many Requests', 'too many token requests');
      else sendError(res, 403, 'Forbidden', 'too many token requests');
      return;
    }
    if (!req.is('application/x-www-form-urlencoded')) {
      sendError(res, 400, 'Bad Request', 'Content-Type must be application/x-www-form-urlencoded');
      return;
    }
    const credentials = parseBody(tokenRequestSchema, req.body, res);
    if (!credentials) return;
    if (credentials.client_id !== options.clientId || credentials.client_secret !== options.clientSecret) {
      if (sideOf(ctx, 'token.errors') === 'doc')
        sendError(res, 401, 'Unauthorized', 'invalid client credentials');
      else res.status(400).json({ error: 'invalid_client', error_description: 'invalid client credentials' });
      return;
    }
    const token = randomBytes(24).toString('base64url');
    state.tokens.set(token, now + options.tokenTtlSeconds * 1000);
    state.tokenIssueTimes.push(now);
    state.counters.tokensIssued += 1;
    const ttl = options.tokenTtlSeconds;
    const expiresIn = sideOf(ctx, 'token.expires_in') === 'doc' ? ttl : String(ttl);
    res.json({ access_token: token, expires_in: expiresIn, token_type: 'Bearer' });
  });
  return router;
}
