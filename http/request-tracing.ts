import { context, propagation, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import { routeLabel } from './observability';

/**
 * One server span per request, active while the request is handled, so the workflow start
 * (Temporal client interceptor) becomes its child. Named and labelled by the route pattern
 * (`POST /v1/deposits`, the same label as the request metrics), never the raw path, which can hold a CPF or the webhook secret. A
 * caller's `traceparent` is continued. Without a registered SDK this is a no-op span.
 */
export function requestTracing(): RequestHandler {
  return (req, res, next) => {
    const parent = propagation.extract(context.active(), req.headers);
    const span = trace
      .getTracer('pixflow-api')
      .startSpan(
        req.method,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': req.method } },
        parent,
      );
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const route = routeLabel(req);
      span.updateName(`${req.method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    };
    // 'close' also covers a client that went away before the answer.
    res.on('finish', end);
    res.on('close', end);
    context.with(trace.setSpan(parent, span), next);
  };
}
