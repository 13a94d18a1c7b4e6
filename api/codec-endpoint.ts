import { createHash, timingSafeEqual } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import express, { type RequestHandler, Router } from 'express';
import { z } from 'zod';
import { Problem, validationProblem } from '../http/problem';

// The remote codec endpoint the Temporal UI calls to show decrypted payloads to an operator
// (UI setting "codec endpoint"; `npm start` wires it). Its own authentication: a Bearer token
// from CODEC_TOKENS. The embedded stack may also trust the local UI on loopback.

const payloadSchema = z.object({
  metadata: z.record(z.string(), z.string().max(1_000)).optional(),
  data: z.string().optional(),
});
const bodySchema = z.object({ payloads: z.array(payloadSchema).max(1_000) });

const fromJson = (p: z.infer<typeof payloadSchema>): Payload => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64')]),
  ),
  data: p.data === undefined ? undefined : Buffer.from(p.data, 'base64'),
});
const toJson = (p: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(p.metadata ?? {}).map(([k, v]) => [
      k,
      Buffer.from(v ?? new Uint8Array()).toString('base64'),
    ]),
  ),
  data: p.data ? Buffer.from(p.data).toString('base64') : undefined,
});

const digest = (v: string) => createHash('sha256').update(v).digest();

export interface CodecRouteOptions {
  codec: PayloadCodec;
  tokens: string[];
  corsOrigins: string[];
  /** Embedded stack only: accept the local UI without a token when the caller is on loopback. */
  trustLoopbackUi: boolean;
}

export function codecRoutes(opts: CodecRouteOptions): Router {
  const r = Router();
  const tokenDigests = opts.tokens.map(digest);

  const cors: RequestHandler = (req, res, next) => {
    const origin = req.header('origin');
    if (origin && opts.corsOrigins.includes(origin)) {
      res.setHeader('access-control-allow-origin', origin);
      res.setHeader('vary', 'Origin');
      res.setHeader('access-control-allow-methods', 'POST, OPTIONS');
      res.setHeader('access-control-allow-headers', 'authorization, content-type, x-namespace');
      res.setHeader('access-control-allow-credentials', 'true');
    }
    if (req.method === 'OPTIONS') return void res.status(204).end();
    next();
  };

  const auth: RequestHandler = (req, _res, next) => {
    const token = /^Bearer\s+(.+)$/i.exec(req.header('authorization') ?? '')?.[1]?.trim();
    if (token) {
      const given = digest(token);
      let ok = false;
      for (const d of tokenDigests) ok = timingSafeEqual(d, given) || ok;
      if (ok) return next();
    }
    const origin = req.header('origin');
    const loopback = ['127.0.0.1', '::1', '::ffff:127.0.0.1'].includes(req.socket.remoteAddress ?? '');
    if (opts.trustLoopbackUi && loopback && origin && opts.corsOrigins.includes(origin)) return next();
    next(new Problem(401, 'unauthorized', 'Codec access needs a valid token'));
  };

  const handle =
    (op: 'encode' | 'decode'): RequestHandler =>
    async (req, res, next) => {
      const body = bodySchema.safeParse(req.body);
      if (!body.success) return next(validationProblem('body', body.error));
      try {
        const out = await opts.codec[op](body.data.payloads.map(fromJson));
        res.json({ payloads: out.map(toJson) });
      } catch (err) {
        next(new Problem(400, 'codec-error', `Could not ${op} the payloads`, (err as Error).message));
      }
    };

  r.use('/codec', cors, express.json({ limit: '4mb' }), auth);
  r.post('/codec/encode', handle('encode'));
  r.post('/codec/decode', handle('decode'));
  return r;
}
