import http from 'node:http';
import { generate as generateCpf } from '@fnando/cpf';
import type { Client } from '@temporalio/client';
import express from 'express';
import pino from 'pino';
import { closeServer, listen } from '../../common/http';
import type { Pool } from '../../db/pool';
import { Problem, problemHandler } from '../../http/problem';
import { type IngressDeps, ingressRouter } from '../../ingress/router';

// The ingress router mounted as api/app.ts mounts it, on a port of its own.

export const SECRET = 'test-webhook-secret-0123456789';
export const PARTNER = 'pixflow-test-partner';
export const silentLog = pino({ level: 'silent' });

export interface RunningIngress {
  url: string;
  /** The one-URL-for-all-points address. */
  base: string;
  close(): Promise<void>;
}

/** The key onboarding ids are hashed with in these tests. */
export const INGRESS_PII_KEY = 'ingress-test-pii-key-0123';

export async function startIngress(
  pool: Pool,
  temporal: Client,
  over: Partial<IngressDeps> = {},
): Promise<RunningIngress> {
  const app = express();
  app.use(
    ingressRouter({
      config: { WEBHOOK_SECRET: SECRET, WEBHOOK_PARTNER_ID: PARTNER, PII_HASH_KEY: INGRESS_PII_KEY },
      pool,
      temporal,
      log: silentLog,
      ...over,
    }),
  );
  app.use((_req, _res, next) => next(new Problem(404, 'not-found', 'Not found')));
  app.use(problemHandler(silentLog));
  const server = http.createServer(app);
  const port = await listen(server, 0);
  const url = `http://127.0.0.1:${port}`;
  return { url, base: `${url}/webhooks/provider/${SECRET}`, close: () => closeServer(server) };
}

export async function post(url: string, body: unknown, headers: Record<string, string> = {}) {
  const raw = typeof body === 'string' ? body : JSON.stringify(body);
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: raw,
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, raw };
}

let seq = 0;
/** Digits only, unique in this run: a valid txid (and a valid withdrawal transactionId). */
export const uniqueId = () => `${Date.now()}${process.pid}${++seq}`;
/** A valid CPF (the ingress refuses wrong check digits), random: unique enough for one run. */
export const uniqueCpf = () => generateCpf();

export { waitUntil } from '../helpers/wait';
