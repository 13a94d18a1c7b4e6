import https from 'node:https';
import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { Timers } from '../timers';
import { type ApiPixContext, type ApiPixOptions, resolveApiPixOptions } from './context';
import { WebhookNotifier } from './notifier';
import { sendTyped } from './problems';
import { cobRoutes } from './routes/cob';
import { controlRoutes } from './routes/control';
import { oauthRoutes } from './routes/oauth';
import { pixRoutes } from './routes/pix';
import { webhookRoutes } from './routes/webhook';
import { type ApiPixState, createApiPixState } from './state';

// A PSP speaking the Central Bank's standard API Pix: charges (cob), received Pix and their
// returns (devolução), webhooks, over OAuth 2.0 client credentials and mutual TLS. The listener
// asks every caller for a client certificate of the PSP's CA and refuses the handshake without
// one: a caller without it never gets an HTTP answer.

export interface StartApiPixOptions extends ApiPixOptions {
  port?: number;
  host?: string;
  /** The PSP's server certificate and key, and the CA whose client certificates it accepts (PEM). */
  tls: { cert: string; key: string; ca: string };
}

export interface RunningApiPix {
  url: string;
  tokenUrl: string;
  port: number;
  state: ApiPixState;
  ctx: ApiPixContext;
  close(): Promise<void>;
}

function createApp(ctx: ApiPixContext) {
  const app = express();
  app.disable('x-powered-by');
  app.use(express.json({ limit: '1mb' }));
  app.use(express.urlencoded({ extended: false, limit: '64kb' }));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use(oauthRoutes(ctx));
  app.use(cobRoutes(ctx));
  app.use(pixRoutes(ctx));
  app.use(webhookRoutes(ctx));
  app.use(controlRoutes(ctx));
  app.use((_req, res) => {
    sendTyped(res, 'NaoEncontrado', 'Entidade não encontrada.');
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    if (res.headersSent) return;
    const e = err as { type?: string; status?: number; message?: string };
    if (e.type === 'entity.parse.failed' || (e.status !== undefined && e.status < 500)) {
      sendTyped(res, 'RequisicaoInvalida', `Corpo da requisição ilegível: ${e.message ?? 'inválido'}`);
      return;
    }
    ctx.options.logger.warn({ err: e.message }, 'api pix sandbox error');
    sendTyped(res, 'ErroInternoDoServidor', 'Condição inesperada ao processar requisição.');
  });
  return app;
}

export async function startApiPixSandbox(opts: StartApiPixOptions): Promise<RunningApiPix> {
  const { port = 0, host = '127.0.0.1', tls, ...rest } = opts;
  const options = resolveApiPixOptions(rest);
  const timers = new Timers();
  const state = createApiPixState();
  const notifier = new WebhookNotifier(() => state, timers, options);
  const ctx: ApiPixContext = { state, options, timers, notifier };
  const server = https.createServer(
    {
      cert: tls.cert,
      key: tls.key,
      ca: tls.ca,
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2',
    },
    createApp(ctx),
  );
  server.on('tlsClientError', () => {
    state.counters.handshakesRefused += 1;
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const url = `https://${host}:${bound}`;
  return {
    url,
    tokenUrl: `${url}/oauth/token`,
    port: bound,
    state,
    ctx,
    close: () =>
      new Promise<void>((resolve) => {
        timers.close();
        notifier.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
