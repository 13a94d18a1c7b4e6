import type { AddressInfo } from 'node:net';
import express, { type NextFunction, type Request, type Response } from 'express';
import { consoleRoutes } from './console';
import { resolveOptions, type SandboxContext, type SandboxOptions } from './context';
import { sendError } from './http';
import { Notifier } from './notifier';
import { controlRoutes } from './routes/control';
import { depositRoutes } from './routes/deposits';
import { eligibilityRoutes } from './routes/eligibility';
import { inquiryRoutes } from './routes/inquiries';
import { kycRoutes } from './routes/kyc';
import { livenessRoutes } from './routes/liveness';
import { payoutAuthorizationRoutes } from './routes/payout-authorization';
import { receiptRoutes } from './routes/receipts';
import { tokenRoutes } from './routes/token';
import { withdrawalRoutes } from './routes/withdrawals';
import { createState } from './state';
import { Timers } from './timers';

function createSandbox(opts: SandboxOptions = {}) {
  const options = resolveOptions(opts);
  const state = createState(options.notificationTarget, options.dialect);
  const timers = new Timers();
  const notifier = new Notifier({
    state,
    timers,
    maxAttempts: options.notificationMaxAttempts,
    backoffMs: options.notificationBackoffMs,
    timeoutMs: options.notificationTimeoutMs,
  });
  const ctx: SandboxContext = { state, options, notifier, timers };

  const app = express();
  app.disable('x-powered-by');
  // Before the JSON parser: the operator's emulated services verify their body's bytes.
  app.use(eligibilityRoutes(ctx));
  app.use(payoutAuthorizationRoutes(ctx));
  app.use(express.json({ limit: '1mb' }));
  app.use(express.urlencoded({ extended: false, limit: '1mb' }));
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.use(tokenRoutes(ctx));
  app.use(kycRoutes(ctx));
  app.use(livenessRoutes(ctx));
  app.use(depositRoutes(ctx));
  app.use(withdrawalRoutes(ctx));
  app.use(inquiryRoutes(ctx));
  app.use(receiptRoutes(ctx));
  app.use(controlRoutes(ctx));
  app.use(consoleRoutes(ctx));
  app.use((_req, res) => {
    sendError(res, 404, 'Not Found', 'no such endpoint');
  });
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (err as { status?: number }).status ?? 500;
    if (status >= 500) options.logger.warn({ err: (err as Error)?.message }, 'sandbox error');
    if (!res.headersSent) {
      sendError(
        res,
        status,
        status >= 500 ? 'Internal Server Error' : 'Bad Request',
        (err as Error)?.message ?? 'error',
      );
    }
  });

  return { app, state, ctx, close: () => timers.close() };
}

export interface StartSandboxOptions extends SandboxOptions {
  port?: number;
  host?: string;
}

export interface RunningSandbox {
  url: string;
  port: number;
  state: ReturnType<typeof createSandbox>['state'];
  ctx: SandboxContext;
  close(): Promise<void>;
}

export async function startSandbox(opts: StartSandboxOptions = {}): Promise<RunningSandbox> {
  const { port = 0, host = '127.0.0.1', ...rest } = opts;
  const sandbox = createSandbox(rest);
  const server = await new Promise<ReturnType<typeof sandbox.app.listen>>((resolve, reject) => {
    const s = sandbox.app.listen(port, host, (err?: Error) => (err ? reject(err) : resolve(s)));
  });
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://${host}:${bound}`,
    port: bound,
    state: sandbox.state,
    ctx: sandbox.ctx,
    close: () =>
      new Promise<void>((resolve) => {
        sandbox.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
