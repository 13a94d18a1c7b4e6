import { PerformanceObserver } from 'node:perf_hooks';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

// Prometheus metrics. Each process has its own registry; /metrics serves it.

/** One HTTP exchange with a provider, as its connector reports it (status 0: no answer came back). */
export interface ProviderCallEvent {
  endpoint: string;
  status: number;
  durationMs: number;
  outcome: 'ok' | 'error' | 'timeout' | 'connection_error';
}

/** A connector's breaker as the gauge shows it (db/connector-breakers.ts's, by name). */
export interface BreakerReading {
  connector: string;
  state: 'closed' | 'open' | 'half_open';
  failures: number;
}

/** The gauge's value of each state: 1 skips the connector, 0.5 lets one deposit try it. */
export const BREAKER_STATE_VALUE = { closed: 0, half_open: 0.5, open: 1 } as const;

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Node's default metrics, and the longest garbage-collection pause since the last scrape: the
 * default GC histogram's buckets (1, 10, 100 ms) cannot tell a 15 ms pause from a 90 ms one, and
 * the bench lines pauses up with slow answers (bench/tail-evidence.ts). The event-loop delay
 * gauges (`*_nodejs_eventloop_lag_max_seconds`, `_p99_`) already cover the time since the last
 * scrape: prom-client resets their histogram at each.
 */
function processMetrics(registry: Registry, prefix: string) {
  collectDefaultMetrics({ register: registry, prefix });
  let longest = 0;
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) longest = Math.max(longest, e.duration);
  }).observe({ entryTypes: ['gc'] });
  new Gauge({
    name: `${prefix}gc_pause_max_seconds`,
    help: 'The longest garbage-collection pause since the last scrape',
    registers: [registry],
    collect() {
      this.set(longest / 1000);
      longest = 0;
    },
  });
}

export function createWorkerMetrics() {
  const registry = new Registry();
  processMetrics(registry, 'pixflow_worker_');
  const providerCalls = new Counter({
    name: 'pixflow_provider_calls_total',
    help: 'Provider HTTP calls by endpoint and outcome',
    labelNames: ['endpoint', 'outcome', 'status'] as const,
    registers: [registry],
  });
  const providerLatency = new Histogram({
    name: 'pixflow_provider_call_duration_seconds',
    help: 'Provider HTTP call latency by endpoint',
    labelNames: ['endpoint'] as const,
    buckets: latencyBuckets,
    registers: [registry],
  });
  const providerErrors = new Counter({
    name: 'pixflow_provider_errors_total',
    help: 'Provider calls that failed (HTTP >= 400, timeouts, connection errors) by endpoint',
    labelNames: ['endpoint', 'outcome'] as const,
    registers: [registry],
  });
  const payoutDeadlines = new Counter({
    name: 'pixflow_payout_deadline_total',
    help: "Payouts that passed their deadline's at-risk mark (state at_risk) or the deadline itself (missed) still open",
    labelNames: ['state'] as const,
    registers: [registry],
  });
  const unclassified = new Counter({
    name: 'pixflow_provider_unclassified_total',
    help: 'Provider answers no rule of the connector reads, by operation: the flow waits, an alert is raised',
    labelNames: ['op'] as const,
    registers: [registry],
  });
  let tokenRequests: () => number = () => 0;
  new Gauge({
    name: 'pixflow_provider_token_requests',
    help: 'OAuth token requests this worker process has made',
    registers: [registry],
    collect() {
      this.set(tokenRequests());
    },
  });
  // Read from Postgres at each scrape: every worker shows the breakers all of them share. Both
  // gauges collect at once, so they share the scrape's one read while it runs.
  let breakers: () => Promise<BreakerReading[]> = async () => [];
  let reading: Promise<BreakerReading[]> | undefined;
  const readBreakers = () => {
    reading ??= breakers()
      // Postgres unreachable: no reading rather than a failed scrape.
      .catch(() => [])
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  new Gauge({
    name: 'pixflow_connector_breaker_state',
    help: "Each connector of the deposits' routing: 0 closed, 0.5 half-open (the next deposit tries it), 1 open (skipped)",
    labelNames: ['connector'] as const,
    registers: [registry],
    async collect() {
      const read = await readBreakers();
      // A connector that left the routing leaves the gauge.
      this.reset();
      for (const b of read) this.set({ connector: b.connector }, BREAKER_STATE_VALUE[b.state]);
    },
  });
  new Gauge({
    name: 'pixflow_connector_breaker_failures',
    help: "Failed charge creations in the current window of each connector of the deposits' routing",
    labelNames: ['connector'] as const,
    registers: [registry],
    async collect() {
      const read = await readBreakers();
      this.reset();
      for (const b of read) this.set({ connector: b.connector }, b.failures);
    },
  });
  return {
    registry,
    /** Where the breaker gauges read from at each scrape. */
    watchBreakers(read: () => Promise<BreakerReading[]>) {
      breakers = read;
    },
    onProviderCall(e: ProviderCallEvent) {
      providerCalls.inc({ endpoint: e.endpoint, outcome: e.outcome, status: String(e.status) });
      providerLatency.observe({ endpoint: e.endpoint }, e.durationMs / 1000);
      if (e.outcome !== 'ok') providerErrors.inc({ endpoint: e.endpoint, outcome: e.outcome });
    },
    countUnclassified(op: string) {
      unclassified.inc({ op });
    },
    countPayoutDeadline(state: 'at_risk' | 'missed') {
      payoutDeadlines.inc({ state });
    },
    countTokenRequests(fn: () => number) {
      tokenRequests = fn;
    },
  };
}

export function createApiMetrics() {
  const registry = new Registry();
  processMetrics(registry, 'pixflow_api_');
  const requests = new Counter({
    name: 'pixflow_http_requests_total',
    help: 'API requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'pixflow_http_request_duration_seconds',
    help: 'API request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: latencyBuckets,
    registers: [registry],
  });
  const unclassified = new Counter({
    name: 'pixflow_provider_unclassified_total',
    help: 'Provider answers no rule of the connector reads, by operation: the flow waits, an alert is raised',
    labelNames: ['op'] as const,
    registers: [registry],
  });
  const notifications = new Counter({
    name: 'pixflow_ingress_notifications_total',
    help: 'Webhook notifications by point, type and outcome',
    labelNames: ['point', 'type', 'outcome'] as const,
    registers: [registry],
  });
  const unmatchedLiveness = new Counter({
    name: 'pixflow_ingress_liveness_unmatched_total',
    help: 'Liveness callbacks that named no request pixflow made for the person: kept in the inbox, not signalled',
    labelNames: ['flow'] as const,
    registers: [registry],
  });
  const authFailures = new Counter({
    name: 'pixflow_auth_failures_total',
    help: 'Failed authentications (a wrong, expired or revoked API key; a wrong ingress secret or partner id) by surface: api, ingress',
    labelNames: ['surface'] as const,
    registers: [registry],
  });
  const authLimited = new Counter({
    name: 'pixflow_auth_limited_total',
    help: 'Requests refused 429 because their address failed authentication too often, by surface: api, ingress',
    labelNames: ['surface'] as const,
    registers: [registry],
  });
  const alertsRaised = new Counter({
    name: 'pixflow_alerts_raised_total',
    help: 'Monitoring alerts raised by rule (docs/monitoring.md): suspicious movement flagged, no money blocked',
    labelNames: ['rule'] as const,
    registers: [registry],
  });
  let backlog: () => Promise<number> = async () => 0;
  // -1 when the inbox cannot be read (Postgres down): visible, and alertable.
  new Gauge({
    name: 'pixflow_inbox_pending',
    help: 'Inbox notifications not yet delivered to their workflow',
    registers: [registry],
    async collect() {
      this.set(await backlog().catch(() => -1));
    },
  });
  return {
    registry,
    observeRequest(method: string, route: string, status: number, seconds: number) {
      const labels = { method, route, status: String(status) };
      requests.inc(labels);
      latency.observe(labels, seconds);
    },
    countUnclassified(op: string) {
      unclassified.inc({ op });
    },
    countNotification(point: string, type: string, outcome: string) {
      notifications.inc({ point, type, outcome });
    },
    countUnmatchedLiveness(flow: 'onboarding' | 'biometrics') {
      unmatchedLiveness.inc({ flow });
    },
    countAuthFailure(surface: 'api' | 'ingress') {
      authFailures.inc({ surface });
    },
    countAuthLimited(surface: 'api' | 'ingress') {
      authLimited.inc({ surface });
    },
    countAlert(rule: string) {
      alertsRaised.inc({ rule });
    },
    measureBacklog(fn: () => Promise<number>) {
      backlog = fn;
    },
  };
}

export type ApiMetrics = ReturnType<typeof createApiMetrics>;
