import { randomBytes } from 'node:crypto';
import { type Response, Router } from 'express';
import type { ApiPixContext } from '../context';
import { faultGate, peerFingerprint } from '../http';
import { SCOPES, type Scope, tokenFormSchema } from '../wire';

// POST /oauth/token: OAuth 2.0 client credentials (RFC 6749 §4.4) over the same mutual TLS.
// The client authenticates with HTTP Basic (or, as RFC 6749 allows, client_id and
// client_secret in the form); `scope` asks for some of the PSP's scopes, all of them when absent.
// Errors are OAuth's own JSON (`error`, `error_description`), not problem+json. The token is
// bound to the client certificate that asked for it (RFC 8705).

function oauthError(res: Response, status: number, error: string, description: string): void {
  if (status === 401) res.set('www-authenticate', 'Basic realm="api-pix"');
  res.status(status).set('cache-control', 'no-store').json({ error, error_description: description });
}

function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec((header ?? '').trim());
  if (!m?.[1]) return undefined;
  const decoded = Buffer.from(m[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  try {
    // RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
    return {
      id: decodeURIComponent(decoded.slice(0, colon)),
      secret: decodeURIComponent(decoded.slice(colon + 1)),
    };
  } catch {
    return undefined;
  }
}

export function oauthRoutes(ctx: ApiPixContext): Router {
  const router = Router();
  router.post('/oauth/token', faultGate(ctx, 'token'), (req, res) => {
    const { options, state } = ctx;
    if (!req.is('application/x-www-form-urlencoded')) {
      oauthError(res, 400, 'invalid_request', 'Content-Type deve ser application/x-www-form-urlencoded');
      return;
    }
    const form = tokenFormSchema.safeParse(req.body ?? {});
    if (!form.success) {
      oauthError(res, 400, 'invalid_request', 'formulário inválido');
      return;
    }
    const basic = basicCredentials(req.get('authorization'));
    const id = basic?.id ?? form.data.client_id;
    const secret = basic?.secret ?? form.data.client_secret;
    if (id !== options.clientId || secret !== options.clientSecret) {
      oauthError(res, 401, 'invalid_client', 'credenciais do cliente inválidas');
      return;
    }
    if (form.data.grant_type === undefined) {
      oauthError(res, 400, 'invalid_request', 'grant_type ausente');
      return;
    }
    if (form.data.grant_type !== 'client_credentials') {
      oauthError(res, 400, 'unsupported_grant_type', 'apenas client_credentials');
      return;
    }
    const asked = (form.data.scope ?? '').split(' ').filter(Boolean);
    const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
    if (unknown.length > 0) {
      oauthError(res, 400, 'invalid_scope', `escopos desconhecidos: ${unknown.join(' ')}`);
      return;
    }
    const scopes = new Set<Scope>(asked.length > 0 ? (asked as Scope[]) : SCOPES);
    const token = randomBytes(32).toString('base64url');
    state.tokens.set(token, {
      expiresAtMs: options.now() + options.tokenTtlSeconds * 1000,
      scopes,
      certFingerprint: peerFingerprint(req),
    });
    state.counters.tokensIssued += 1;
    res.set('cache-control', 'no-store').json({
      access_token: token,
      token_type: 'Bearer',
      expires_in: options.tokenTtlSeconds,
      scope: [...scopes].join(' '),
    });
  });
  return router;
}
