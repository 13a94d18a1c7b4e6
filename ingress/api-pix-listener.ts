import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { closeServer, listen } from '../common/http';
import { Problem, sendProblem } from '../http/problem';
import { securityHeaders } from '../http/security-headers';
import { apiPixClientCas, CLIENT_CA_REFRESH_MS } from './api-pix-client-cas';
import { type ApiPixIngressDeps, apiPixWebhookRouter } from './api-pix-router';

// The API process's second listener, for a PSP speaking the Central Bank's API Pix: HTTPS with
// mutual TLS, as the spec has the callback protected. A caller without a client certificate one
// of the trusted CAs signed (the environment's, and each brand API Pix account's own) never
// completes the handshake, so it reaches no route; the one route it may reach is the webhook's,
// which then takes only a certificate of the CA of the account its path names
// (docs/connectors.md, API Pix webhooks; ingress/api-pix-client-cas.ts).

export interface ApiPixListenerTls {
  /** pixflow's server certificate and key, PEM. */
  cert: string;
  key: string;
  /**
   * API_PIX_WEBHOOK_CLIENT_CA_FILE, PEM: the CA of the default brand's PSP, and of every brand
   * account that names no webhook client CA of its own.
   */
  clientCa: string;
}

export interface ApiPixListener {
  port: number;
  close(): Promise<void>;
}

export async function startApiPixListener(
  deps: ApiPixIngressDeps & {
    port: number;
    host: string;
    tls: ApiPixListenerTls;
    /** How often the brands' webhook client CA files are read again. */
    clientCaRefreshMs?: number;
  },
): Promise<ApiPixListener> {
  const { log } = deps;
  const clientCas = apiPixClientCas({ pool: deps.pool, environmentPem: deps.tls.clientCa, log });
  const refresh = () =>
    clientCas.refresh().catch((err) => {
      // The CAs read last stay trusted; the environment's always is.
      log.warn({ err: String(err) }, 'API Pix webhook client CAs not read again; keeping those read before');
      return false;
    });
  await refresh();
  const context = () => ({
    cert: deps.tls.cert,
    key: deps.tls.key,
    ca: clientCas.pems(),
    minVersion: 'TLSv1.2' as const,
  });

  const app = express();
  app.disable('x-powered-by');
  app.use(securityHeaders());
  app.use(apiPixWebhookRouter(deps, clientCas));
  app.use((req, res) =>
    sendProblem(res, new Problem(404, 'not-found', 'Not found', `no route for ${req.method} ${req.path}`)),
  );
  const server = https.createServer({ ...context(), requestCert: true, rejectUnauthorized: true }, app);
  await listen(server, deps.port, deps.host);
  // A CA given to an account while the listener runs is let in at the next handshake after this.
  const timer = setInterval(() => {
    void refresh().then((changed) => {
      if (changed && server.listening) {
        server.setSecureContext(context());
        log.info({ cas: clientCas.pems().length }, 'API Pix webhook client CAs changed');
      }
    });
  }, deps.clientCaRefreshMs ?? CLIENT_CA_REFRESH_MS);
  timer.unref();
  return {
    port: (server.address() as AddressInfo).port,
    close: () => {
      clearInterval(timer);
      return closeServer(server);
    },
  };
}
