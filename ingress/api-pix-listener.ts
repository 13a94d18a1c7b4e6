import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { closeServer, listen } from '../common/http';
import { Problem, sendProblem } from '../http/problem';
import { securityHeaders } from '../http/security-headers';
import { type ApiPixIngressDeps, apiPixWebhookRouter } from './api-pix-router';

// The API process's second listener, for a PSP speaking the Central Bank's API Pix: HTTPS with
// mutual TLS, as the spec has the callback protected. A caller without a client certificate the
// PSP's CA signed never completes the handshake, so it reaches no route; the one route it may
// reach is the webhook's (docs/connectors.md, API Pix webhooks).

export interface ApiPixListenerTls {
  /** pixflow's server certificate and key, PEM. */
  cert: string;
  key: string;
  /** The CA that signs the PSP's client certificate, PEM: the only callers let in. */
  clientCa: string;
}

export interface ApiPixListener {
  port: number;
  close(): Promise<void>;
}

export async function startApiPixListener(
  deps: ApiPixIngressDeps & { port: number; host: string; tls: ApiPixListenerTls },
): Promise<ApiPixListener> {
  const app = express();
  app.disable('x-powered-by');
  app.use(securityHeaders());
  app.use(apiPixWebhookRouter(deps));
  app.use((req, res) =>
    sendProblem(res, new Problem(404, 'not-found', 'Not found', `no route for ${req.method} ${req.path}`)),
  );
  const server = https.createServer(
    {
      cert: deps.tls.cert,
      key: deps.tls.key,
      ca: deps.tls.clientCa,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    },
    app,
  );
  await listen(server, deps.port, deps.host);
  return {
    port: (server.address() as AddressInfo).port,
    close: () => closeServer(server),
  };
}
