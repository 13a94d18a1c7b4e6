import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';
import type { Logger } from '../common/logger';
import type { ApiMetrics } from '../common/metrics';

declare module 'express-serve-static-core' {
  interface Request {
    id?: string;
    log?: Logger;
  }
}

/**
 * Request id (the caller's x-request-id or a new one, echoed back), a per-request child
 * logger, one access-log line and the request metrics. Routes are logged and labelled by
 * their pattern (`/v1/onboardings/:cpf`), never by the raw path, which can hold a CPF or the
 * webhook secret.
 */
export function requestObservability(log: Logger, metrics: ApiMetrics): RequestHandler {
  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const incoming = req.header('x-request-id');
    req.id = incoming && /^[\w.-]{1,100}$/.test(incoming) ? incoming : randomUUID();
    req.log = log.child({ requestId: req.id });
    res.setHeader('x-request-id', req.id);
    // Answers that name a flow put its workflow id on the access-log line.
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      const id = (body as { workflowId?: unknown } | null)?.workflowId;
      if (typeof id === 'string') res.locals.workflowId = id;
      return json(body);
    };
    res.on('finish', () => {
      const route = req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.observeRequest(req.method, route, res.statusCode, seconds);
      const workflowId = res.locals.workflowId as string | undefined;
      req.log?.info(
        { method: req.method, route, status: res.statusCode, ms: Math.round(seconds * 1000), workflowId },
        'request',
      );
    });
    next();
  };
}
