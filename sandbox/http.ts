import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import type { EndpointName } from '../connectors/identity-payments/wire/schemas';
import type { SandboxContext } from './context';
import { sideOf } from './dialect';
import { type HeldAnswer, latencyFor, takeActThenFail, takeFailure } from './faults';

// Shared HTTP pieces: error bodies, the fault gate in front of every provider endpoint, credentials.

export function sendError(res: Response, status: number, error: string, message: string | string[]): void {
  res.status(status).json({ statusCode: status, message, error });
}

function zodMessages(error: z.ZodError): string[] {
  return error.issues.map((i) => `${i.path.map(String).join('.') || 'body'}: ${i.message}`);
}

/** The body as `schema` parses it, or undefined once a 400 naming every bad field has been sent. */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown, res: Response): T | undefined {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  sendError(res, 400, 'Bad Request', zodMessages(parsed.error));
  return undefined;
}

const heldIdSchema = z.looseObject({ transactionId: z.string().optional(), txid: z.string().optional() });

/** Lists an answer held back in `faults.held` until it is sent or the caller hangs up. */
function listHeld(ctx: SandboxContext, endpoint: EndpointName, req: Request, res: Response): void {
  const body = heldIdSchema.safeParse(req.body);
  const id = body.success ? (body.data.transactionId ?? body.data.txid) : undefined;
  const entry: HeldAnswer = {
    endpoint,
    ...(id === undefined ? {} : { id }),
    ...(req.socket.remotePort === undefined ? {} : { callerPort: req.socket.remotePort }),
    since: new Date(ctx.options.now()).toISOString(),
  };
  const { held } = ctx.state.faults;
  held.push(entry);
  res.on('close', () => {
    const at = held.indexOf(entry);
    if (at >= 0) held.splice(at, 1);
  });
}

/**
 * Runs before a provider endpoint: counts it, adds latency, fails it (503, without acting) when a
 * fault says so, and arms "act then fail": the handler acts, then its answer becomes a 500, arrives
 * only after a delay longer than the caller's timeout, or never arrives (held, and listed in
 * `faults.held` meanwhile).
 */
export function faultGate(ctx: SandboxContext, endpoint: EndpointName): RequestHandler {
  return async (req: Request, res: Response, next: NextFunction) => {
    const { state, options, timers } = ctx;
    state.counters.requests[endpoint] = (state.counters.requests[endpoint] ?? 0) + 1;
    const delay = latencyFor(state.faults, options.random);
    if (delay > 0) await timers.sleep(delay);
    if (takeFailure(state.faults, endpoint, options.random)) {
      sendError(res, 503, 'Service Unavailable', `sandbox fault: ${endpoint} unavailable`);
      return;
    }
    const late = takeActThenFail(state.faults, endpoint);
    if (late) {
      const json = res.json.bind(res);
      res.json = (body: unknown) => {
        if (late.mode === 'garbled') {
          res.status(200).type('text/plain').send(`OK ${endpoint} accepted`);
          return res;
        }
        if (late.mode === 'error') {
          res.status(500);
          return json({
            statusCode: 500,
            message: `sandbox fault: ${endpoint} acted, then failed`,
            error: 'Internal Server Error',
          });
        }
        listHeld(ctx, endpoint, req, res);
        if (late.mode === 'timeout') {
          timers.set(() => {
            if (!res.writableEnded && !res.destroyed) json(body);
          }, late.delayMs);
        }
        return res;
      };
    }
    next();
  };
}

/**
 * The OAuth token check, by the dialect's `auth.header`: on `doc`, the form the document's samples
 * show for this endpoint (`docForm`: the bare token for KYC and liveness, `Bearer <token>` for
 * inquiries) and only that; on `other`, `Bearer <token>` everywhere. The wrong form is a 401.
 */
export function requireToken(ctx: SandboxContext, docForm: 'bare' | 'bearer'): RequestHandler {
  return (req, res, next) => {
    const form = sideOf(ctx, 'auth.header') === 'doc' ? docForm : 'bearer';
    const header = (req.get('authorization') ?? '').trim();
    const bearer = /^Bearer\s+(\S+)$/i.exec(header);
    if (!header) {
      sendError(res, 401, 'Unauthorized', 'missing access token');
      return;
    }
    if (form === 'bare' && bearer) {
      sendError(res, 401, 'Unauthorized', 'Authorization must be the access token alone, without Bearer');
      return;
    }
    if (form === 'bearer' && !bearer) {
      sendError(res, 401, 'Unauthorized', 'Authorization must be Bearer <access token>');
      return;
    }
    const token = bearer?.[1] ?? header;
    const expiresAt = ctx.state.tokens.get(token);
    if (expiresAt === undefined || expiresAt <= ctx.options.now()) {
      sendError(res, 401, 'Unauthorized', 'invalid or expired access token');
      return;
    }
    next();
  };
}

/** `x-service-api-key: Api-Key <key>` (the bare key is accepted too). */
export function requireApiKey(ctx: SandboxContext): RequestHandler {
  return (req, res, next) => {
    const value = (req.get('x-service-api-key') ?? '').replace(/^Api-Key\s+/i, '').trim();
    if (value !== ctx.options.apiKey) {
      sendError(res, 401, 'Unauthorized', value ? 'invalid api key' : 'missing x-service-api-key');
      return;
    }
    next();
  };
}

/** The operator-supplied merchant id in the body must be ours. */
export function merchantOk(ctx: SandboxContext, res: Response, merchant: string): boolean {
  if (merchant === ctx.options.merchant) return true;
  sendError(res, 403, 'Forbidden', 'unknown merchant');
  return false;
}
