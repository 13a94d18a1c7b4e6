import { randomUUID } from 'node:crypto';
import type { Application, Request, RequestHandler } from 'express';
import { type MatchFunction, match } from 'path-to-regexp';
import type { Logger } from '../common/logger';
import type { ApiMetrics } from '../common/metrics';

declare module 'express-serve-static-core' {
  interface Request {
    id?: string;
    log?: Logger;
  }
}

/** The part of a router's route listing (express 5's router, `listRoutes()`) read here. */
interface ListedRoute {
  path: string | RegExp;
  methods?: string[];
  router?: { listRoutes?(): ListedRoute[] };
}

interface RouteEntry {
  /** The route's path with every mount prefix before it, e.g. `/v1/deposits/:txid`. */
  template: string;
  methods: string[];
  matches: MatchFunction<object>;
}

const joinPath = (prefix: string, p: string) => `${prefix.replace(/\/$/, '')}${p === '/' ? '' : p}` || '/';

function listRoutes(router: { listRoutes?(): ListedRoute[] }, prefix: string, into: RouteEntry[]) {
  for (const r of router.listRoutes?.() ?? []) {
    if (typeof r.path !== 'string') continue;
    const template = joinPath(prefix, r.path);
    if (r.router) listRoutes(r.router, template, into);
    // Express's own matcher, with its defaults (case-insensitive, an optional trailing slash);
    // no decoding: a malformed escape in a hostile path must not throw here.
    if (r.methods) into.push({ template, methods: r.methods, matches: match(template, { decode: false }) });
  }
  return into;
}

/** Every route of a router and the routers mounted in it: its full path template and methods. */
export const routesOf = (router: unknown, prefix: string): { template: string; methods: string[] }[] =>
  listRoutes(router as { listRoutes?(): ListedRoute[] }, prefix, []).map(({ template, methods }) => ({
    template,
    methods,
  }));

const routeTables = new WeakMap<Application, RouteEntry[]>();

/**
 * The template of the route that serves this method and path, found in the app's own route
 * table rather than read from `req.route`: an answer decided before the route ran (a body
 * that is not JSON) or after it handed an error back out of its router (where `req.baseUrl`
 * is the parent's again) counts under the same label as the route's successes. A path no
 * route serves is `unmatched`. Never the raw path, which can hold a CPF or the webhook secret.
 */
export function routeLabel(req: Request): string {
  const known = labels.get(req);
  if (known !== undefined) return known;
  const label = findRouteLabel(req);
  labels.set(req, label);
  return label;
}

/** Each answer is labelled once: by the metrics and by its trace span alike. */
const labels = new WeakMap<Request, string>();

function routeTable(app: Application): RouteEntry[] {
  let table = routeTables.get(app);
  if (!table) {
    // Read once, at the first answer, when every route has been added.
    table = listRoutes(app.router as { listRoutes?(): ListedRoute[] }, '', []);
    routeTables.set(app, table);
  }
  return table;
}

/**
 * The methods the routes serve at this request's path, HEAD with GET (Express answers it), and
 * the route's template; undefined when no route has this path at all.
 */
export function allowedMethods(req: Request): { template: string; methods: string[] } | undefined {
  const path = req.originalUrl.split('?')[0] ?? '';
  const found = routeTable(req.app).filter((r) => r.matches(path) !== false);
  const first = found[0];
  if (!first) return undefined;
  const methods = new Set(found.flatMap((r) => r.methods));
  if (methods.has('GET')) methods.add('HEAD');
  return { template: first.template, methods: [...methods] };
}

function findRouteLabel(req: Request): string {
  const table = routeTable(req.app);
  const path = req.originalUrl.split('?')[0] ?? '';
  const entry = table.find(
    (r) => (r.methods.includes(req.method) || r.methods.includes('*')) && r.matches(path) !== false,
  );
  if (entry) return entry.template;
  return req.route ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
}

/**
 * Request id (the caller's x-request-id or a new one, echoed back), a per-request child
 * logger, one access-log line and the request metrics. Routes are logged and labelled by
 * their pattern (`/v1/onboardings/:cpf`, see routeLabel).
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
      const route = routeLabel(req);
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
