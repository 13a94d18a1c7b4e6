import type { TLSSocket } from 'node:tls';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ApiPixContext } from './context';
import { type EndpointName, latencyFor, takeActThenFail, takeFailure } from './faults';
import { problemOf, sendTyped, sendUnauthorized } from './problems';
import type { Scope } from './wire';

// What runs in front of every API Pix endpoint: the fault gate, then the Bearer token and its
// scope.

/** SHA-256 fingerprint of the client certificate this request's connection presented. */
export function peerFingerprint(req: Request): string {
  const socket = req.socket as TLSSocket;
  return socket.getPeerCertificate?.()?.fingerprint256 ?? '';
}

/**
 * Counts the call, adds latency, answers 503 without acting when the PSP is down or a fault
 * says so, and arms "act then fail": the handler acts, then its answer becomes a 500, arrives
 * only after a delay, or never arrives.
 */
export function faultGate(ctx: ApiPixContext, endpoint: EndpointName): RequestHandler {
  return async (_req: Request, res: Response, next: NextFunction) => {
    const { state, options, timers } = ctx;
    const faults = state.faults;
    state.counters.requests[endpoint] = (state.counters.requests[endpoint] ?? 0) + 1;
    const delay = latencyFor(faults, options.random);
    if (delay > 0) await timers.sleep(delay);
    if (faults.down || takeFailure(faults, endpoint, options.random)) {
      res.set('retry-after', String(Math.max(1, faults.retryAfterSeconds)));
      sendTyped(
        res,
        'ServicoIndisponivel',
        'Serviço não está disponível no momento. Serviço solicitado pode estar em manutenção ou fora da janela de funcionamento.',
      );
      return;
    }
    const late = takeActThenFail(faults, endpoint);
    if (late) {
      const send = res.send.bind(res);
      let held = false;
      res.send = (body?: unknown) => {
        if (held) return send(body);
        held = true;
        if (late.mode === 'error') {
          const problem = problemOf('ErroInternoDoServidor', 'Condição inesperada ao processar requisição.');
          res.status(500).type('application/problem+json');
          return send(JSON.stringify(problem));
        }
        if (late.mode === 'timeout') {
          timers.set(() => {
            if (!res.writableEnded && !res.destroyed) send(body);
          }, late.delayMs);
        }
        // `hang`: never answered; the caller gives up, or close() ends the connection.
        return res;
      };
    }
    next();
  };
}

/** A valid Bearer token issued to this client certificate, carrying `scope`. */
export function requireScope(ctx: ApiPixContext, scope: Scope): RequestHandler {
  return (req, res, next) => {
    const header = (req.get('authorization') ?? '').trim();
    const bearer = /^Bearer\s+(\S+)$/i.exec(header);
    if (!bearer?.[1]) {
      sendUnauthorized(res, header ? 'Authorization deve ser Bearer <access_token>' : 'access_token ausente');
      return;
    }
    const token = ctx.state.tokens.get(bearer[1]);
    if (!token || token.expiresAtMs <= ctx.options.now()) {
      sendUnauthorized(res, 'access_token inválido ou expirado', 'invalid_token');
      return;
    }
    if (token.certFingerprint !== peerFingerprint(req)) {
      sendUnauthorized(res, 'access_token emitido para outro certificado', 'invalid_token');
      return;
    }
    if (!token.scopes.has(scope)) {
      res.set('www-authenticate', `Bearer realm="api-pix", error="insufficient_scope", scope="${scope}"`);
      sendTyped(res, 'AcessoNegado', `Requisição de participante autenticado sem o escopo ${scope}.`);
      return;
    }
    next();
  };
}
