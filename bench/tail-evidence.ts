import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import type { Bench } from './harness';
import type { Launched } from './load';
import { busyPctSince, cpuTicks, stealPctSince } from './proc';
import { parseMetrics, type Sample } from './prom-text';
import { settings } from './settings';
import { percentile, round } from './stats';

// What the peak's slowest answers waited on. While deposits are offered, every few seconds (a
// window) the bench reads what each process says it waited on: the API's and the worker's
// event-loop delay and garbage-collection pauses (their /metrics), the worker's workflow- and
// activity-task schedule-to-start and workflow-task execution (the Temporal SDK's metrics in the
// worker's /metrics), Temporal's own request latency by operation (the dev server's /metrics), and
// how busy the machine was (/proc/stat, steal apart). Each answer over the step's p99 is then set
// beside the windows it spans: what was stalled meanwhile, and a verdict (the longest stall).
// The same for a sample of ordinary answers, so that a stall every answer meets reads as the
// coincidence it is. Parsing, windows and attribution are pure (test/unit/bench-tail-evidence.test.ts).

/** A histogram's cumulative buckets (upper bound in ms → count), count and sum (ms). */
export interface Hist {
  buckets: [number, number][];
  count: number;
  sumMs: number;
}

/** Milliseconds per unit of a histogram named so: seconds when its name says so, else ms (the SDK's default). */
const msPerUnit = (name: string, seconds: boolean) => (seconds || name.includes('_seconds') ? 1000 : 1);

/**
 * The histograms whose name starts with `base` (a unit suffix allowed), summed over their series
 * by `keyOf(labels)` (undefined: left out). `seconds`: its values are in seconds.
 */
export function histograms(
  samples: readonly Sample[],
  base: string,
  keyOf: (labels: Record<string, string>) => string | undefined = () => '',
  seconds = false,
): Map<string, Hist> {
  const out = new Map<string, Hist>();
  const of = (key: string) => {
    const h = out.get(key) ?? { buckets: [], count: 0, sumMs: 0 };
    out.set(key, h);
    return h;
  };
  for (const s of samples) {
    if (!s.name.startsWith(base)) continue;
    const rest = s.name.slice(base.length).replace(/^_(milliseconds|seconds)/, '');
    const key = ['_bucket', '_count', '_sum'].includes(rest) ? keyOf(s.labels) : undefined;
    if (key === undefined) continue;
    const unit = msPerUnit(s.name, seconds);
    const h = of(key);
    if (rest === '_bucket') {
      const le = s.labels.le === '+Inf' ? Number.POSITIVE_INFINITY : Number(s.labels.le) * unit;
      const b = h.buckets.find(([x]) => x === le);
      if (b) b[1] += s.value;
      else h.buckets.push([le, s.value]);
    } else if (rest === '_count') h.count += s.value;
    else if (rest === '_sum') h.sumMs += s.value * unit;
  }
  for (const h of out.values()) h.buckets.sort(([a], [b]) => a - b);
  return out;
}

/** What a histogram gained from `a` to `b`; `b` whole when it restarted (its count fell). */
export function histDelta(a: Hist | undefined, b: Hist): Hist {
  if (!a || b.count < a.count) return b;
  return {
    buckets: b.buckets.map(([le, n]) => [le, n - (a.buckets.find(([x]) => x === le)?.[1] ?? 0)]),
    count: b.count - a.count,
    sumMs: b.sumMs - a.sumMs,
  };
}

/**
 * The q-th quantile (0-1) of a histogram, interpolated within its bucket as Prometheus's
 * histogram_quantile does; the highest finite bound when it falls in +Inf; NaN when empty.
 */
export function histQuantile(h: Hist, q: number): number {
  if (h.count <= 0) return Number.NaN;
  const rank = q * h.count;
  let prevLe = 0;
  let prevN = 0;
  for (const [le, n] of h.buckets) {
    if (n >= rank) {
      if (!Number.isFinite(le)) return prevLe;
      return n === prevN ? le : prevLe + ((le - prevLe) * (rank - prevN)) / (n - prevN);
    }
    prevLe = Number.isFinite(le) ? le : prevLe;
    prevN = n;
  }
  return prevLe;
}

/** A latency in one window: how many, their p99 and mean (ms). */
export interface Lat {
  n: number;
  p99Ms: number;
  meanMs: number;
}

const latOf = (h: Hist): Lat => ({
  n: h.count,
  p99Ms: round(histQuantile(h, 0.99), 1),
  meanMs: round(h.count ? h.sumMs / h.count : Number.NaN, 1),
});

/** A Node process's stalls in one window (ms): its event loop's longest delay and p99, its GC pauses. */
export interface ProcessStalls {
  loopMaxMs: number;
  loopP99Ms: number;
  gcCount: number;
  gcMs: number;
  gcMaxMs: number;
}

/** What every process said it waited on from `t0` to `t1` (ms since the epoch). */
export interface Window {
  t0: number;
  t1: number;
  /** The machine's busy share (steal included) and the hypervisor's, % of its CPU time. */
  busyPct: number;
  stealPct: number;
  api?: ProcessStalls;
  worker?: ProcessStalls;
  workflowTaskSchedToStart?: Lat;
  activitySchedToStart?: Lat;
  workflowTaskExecution?: Lat;
  /** Temporal's request latency by `service:operation` (and `persistence:operation`), those served in the window. */
  temporal: Record<string, Lat>;
}

/** One scrape of the three /metrics, as read at once. */
export interface Scrape {
  at: number;
  api?: Sample[];
  worker?: Sample[];
  temporal?: Sample[];
}

const gauge = (samples: readonly Sample[], name: string) => samples.find((s) => s.name === name)?.value ?? 0;

/** A process's stalls between two scrapes of its /metrics (`prefix`: its metrics' prefix). */
export function stallsOf(prev: readonly Sample[], next: readonly Sample[], prefix: string): ProcessStalls {
  const gc = (s: readonly Sample[]) => histograms(s, `${prefix}nodejs_gc_duration_seconds`).get('');
  const d = gc(next) ? histDelta(gc(prev), gc(next) as Hist) : undefined;
  return {
    loopMaxMs: round(gauge(next, `${prefix}nodejs_eventloop_lag_max_seconds`) * 1000, 1),
    loopP99Ms: round(gauge(next, `${prefix}nodejs_eventloop_lag_p99_seconds`) * 1000, 1),
    gcCount: d?.count ?? 0,
    gcMs: round(d?.sumMs ?? 0, 1),
    gcMaxMs: round(gauge(next, `${prefix}gc_pause_max_seconds`) * 1000, 1),
  };
}

/** The SDK histogram `name`'s latency between two scrapes of the worker's /metrics. */
function sdkLat(prev: readonly Sample[], next: readonly Sample[], name: string): Lat | undefined {
  const b = histograms(next, name).get('');
  return b ? latOf(histDelta(histograms(prev, name).get(''), b)) : undefined;
}

/**
 * Operations that wait on a worker or a long poll by design: their latency is the answer's own
 * (an update-with-start waits for the QR), not something it waited on.
 */
export const WAITS_BY_DESIGN =
  /^(Poll|ExecuteMultiOperation$|UpdateWorkflowExecution$|QueryWorkflow$|GetWorkflowExecutionHistory|GetMutableState$|GetTaskQueueUserData$|ListNexusEndpoints$|RecordActivityTaskHeartbeat|DescribeTaskQueue$)/;

const temporalKey = (service: string) => (l: Record<string, string>) =>
  l.operation && !WAITS_BY_DESIGN.test(l.operation)
    ? `${service === 'service' ? l.service_name : service}:${l.operation}`
    : undefined;

/** Temporal's request latency by operation between two scrapes of its /metrics, those served meanwhile. */
export function temporalLatencies(prev: readonly Sample[], next: readonly Sample[]): Record<string, Lat> {
  const out: Record<string, Lat> = {};
  for (const [base, key] of [
    ['service_latency', temporalKey('service')],
    ['persistence_latency', temporalKey('persistence')],
  ] as const) {
    const before = histograms(prev, base, key, true);
    for (const [op, h] of histograms(next, base, key, true)) {
      const d = histDelta(before.get(op), h);
      if (d.count > 0) out[op] = latOf(d);
    }
  }
  return out;
}

const SDK = {
  workflowTaskSchedToStart: 'temporal_workflow_task_schedule_to_start_latency',
  activitySchedToStart: 'temporal_activity_schedule_to_start_latency',
  workflowTaskExecution: 'temporal_workflow_task_execution_latency',
} as const;

/**
 * The scrape the next window starts from: `next`, with the last reading of each source it could
 * not read, so the window after a failed read still sees what that source gained meanwhile.
 */
export const carried = (prev: Scrape, next: Scrape): Scrape => ({
  at: next.at,
  api: next.api ?? prev.api,
  worker: next.worker ?? prev.worker,
  temporal: next.temporal ?? prev.temporal,
});

/** The window between two scrapes, with the machine's CPU over it. */
export function windowOf(prev: Scrape, next: Scrape, cpu: { busyPct: number; stealPct: number }): Window {
  const w: Window = { t0: prev.at, t1: next.at, ...cpu, temporal: {} };
  if (prev.api && next.api) w.api = stallsOf(prev.api, next.api, 'pixflow_api_');
  if (prev.worker && next.worker) {
    w.worker = stallsOf(prev.worker, next.worker, 'pixflow_worker_');
    for (const [k, name] of Object.entries(SDK) as [keyof typeof SDK, string][]) {
      const lat = sdkLat(prev.worker, next.worker, name);
      if (lat) w[k] = lat;
    }
  }
  if (prev.temporal && next.temporal) w.temporal = temporalLatencies(prev.temporal, next.temporal);
  return w;
}

/** What counts as a stall an answer waited on (ms, or % of the machine). */
export const THRESHOLDS = {
  /** A process's event loop delayed this long at least once in the window. */
  loopMs: 50,
  /** One garbage-collection pause this long. */
  gcMs: 20,
  /** The window's p99 of the worker's workflow- or activity-task schedule-to-start. */
  schedToStartMs: 50,
  /**
   * The window's p99 of a workflow task's execution: the workflow thread (and the local
   * activities a task waits for, the QR's provider call among them).
   */
  workflowTaskMs: 100,
  /** The window's p99 of a Temporal operation (one that does not wait by design). */
  temporalMs: 100,
  /** The machine this busy, or the hypervisor taking this much: CPU was short. */
  busyPct: 90,
  stealPct: 10,
} as const;

/** What an answer may have waited on; `temporal` and `gc:*` name the operation or process. */
export type Cause =
  | 'api event loop'
  | 'worker event loop'
  | 'gc api'
  | 'gc worker'
  | 'workflow-task schedule-to-start'
  | 'activity schedule-to-start'
  | 'workflow-task execution'
  | 'temporal'
  | 'cpu';

/** The causes read from one source each: its size in a window (ms), and its threshold. */
const TIMED: [Cause, (w: Window) => number | undefined, number][] = [
  ['api event loop', (w) => w.api?.loopMaxMs, THRESHOLDS.loopMs],
  ['worker event loop', (w) => w.worker?.loopMaxMs, THRESHOLDS.loopMs],
  ['gc api', (w) => w.api?.gcMaxMs, THRESHOLDS.gcMs],
  ['gc worker', (w) => w.worker?.gcMaxMs, THRESHOLDS.gcMs],
  ['workflow-task schedule-to-start', (w) => w.workflowTaskSchedToStart?.p99Ms, THRESHOLDS.schedToStartMs],
  ['activity schedule-to-start', (w) => w.activitySchedToStart?.p99Ms, THRESHOLDS.schedToStartMs],
  ['workflow-task execution', (w) => w.workflowTaskExecution?.p99Ms, THRESHOLDS.workflowTaskMs],
];

// A window with nothing to measure (no workflow task in it: a NaN quantile) shows no stall,
// and must not hide another window's.
const finite = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? v : 0);
const worstOf = (ws: readonly Window[], f: (w: Window) => number | undefined) =>
  Math.max(0, ...ws.map((w) => finite(f(w))));

/** Each cause an answer's windows show over its threshold, with its size (ms; % for cpu) and, for Temporal, the operation. */
export function stallsDuring(
  windows: readonly Window[],
  a: { sent: number; answered: number },
): { cause: Cause; ms: number; what?: string }[] {
  const spanned = windows.filter((w) => w.t0 < a.answered && w.t1 > a.sent);
  const worst = (f: (w: Window) => number | undefined) => worstOf(spanned, f);
  const found: { cause: Cause; ms: number; what?: string }[] = [];
  const add = (cause: Cause, ms: number, min: number, what?: string) => {
    if (ms >= min) found.push({ cause, ms: round(ms, 1), ...(what ? { what } : {}) });
  };
  for (const [cause, of, min] of TIMED) add(cause, worst(of), min);
  const ops = spanned.flatMap((w) => Object.entries(w.temporal)).filter(([, l]) => Number.isFinite(l.p99Ms));
  const slowest = ops.sort(([, x], [, y]) => y.p99Ms - x.p99Ms)[0];
  if (slowest) add('temporal', slowest[1].p99Ms, THRESHOLDS.temporalMs, slowest[0]);
  const busy = worst((w) => w.busyPct);
  const steal = worst((w) => w.stealPct);
  if (busy >= THRESHOLDS.busyPct || steal >= THRESHOLDS.stealPct) {
    found.push({ cause: 'cpu', ms: 0, what: `busy ${busy}%, steal ${steal}%` });
  }
  return found;
}

/**
 * What an answer waited on: the longest stall its windows show (a GC pause within an event-loop
 * stall of the same process is the stall's cause), CPU when none but the machine was short of
 * it, `nothing seen` otherwise.
 */
export function verdictOf(stalls: readonly { cause: Cause; ms: number; what?: string }[]): string {
  const timed = stalls.filter((s) => s.cause !== 'cpu').sort((x, y) => y.ms - x.ms);
  const top = timed[0];
  if (!top) return stalls.length ? 'cpu' : 'nothing seen';
  for (const p of ['api', 'worker'] as const) {
    const gc = timed.find((s) => s.cause === `gc ${p}`);
    if (top.cause === `${p} event loop` && gc && gc.ms >= top.ms / 2) return `gc ${p}`;
  }
  return top.cause === 'temporal' ? `temporal ${top.what}` : top.cause;
}

/** A set of answers' causes: how many overlapped each, and how many each verdict names. */
export interface Attribution {
  n: number;
  /** Answers whose windows show each cause over its threshold. */
  overlapped: Partial<Record<Cause, number>>;
  /** Answers by verdict. */
  verdicts: Record<string, number>;
}

export function attribute(
  windows: readonly Window[],
  answers: readonly { sent: number; answered: number }[],
): Attribution {
  const out: Attribution = { n: answers.length, overlapped: {}, verdicts: {} };
  for (const a of answers) {
    const stalls = stallsDuring(windows, a);
    for (const c of new Set(stalls.map((s) => s.cause))) out.overlapped[c] = (out.overlapped[c] ?? 0) + 1;
    const v = verdictOf(stalls);
    out.verdicts[v] = (out.verdicts[v] ?? 0) + 1;
  }
  return out;
}

/** An answer the bench timed: when it was sent and answered (ms). */
export interface Timed {
  sent: number;
  answered: number;
}

/** The evidence of one offering: its slowest 1% and a sample of the rest, attributed. */
export interface TailEvidence {
  windowMs: number;
  windows: number;
  /** The step's p99 (ms): the slow answers are those over it. */
  p99Ms: number;
  slow: Attribution;
  ordinary: Attribution;
  thresholds: typeof THRESHOLDS;
  /** The worst each source showed over the whole offering (ms). */
  worst: {
    apiLoopMs: number;
    workerLoopMs: number;
    apiGcMs: number;
    workerGcMs: number;
    workflowTaskSchedToStartP99Ms: number;
    workflowTaskExecutionP99Ms: number;
    temporal?: { op: string; p99Ms: number };
  };
  /** Windows that lacked a source (a scrape that failed): the verdicts do not see them. */
  missing: { api: number; worker: number; temporal: number };
}

/** Up to `n` answers evenly spaced through `answers` (in the order given). */
export function evenSample<T>(answers: readonly T[], n: number): T[] {
  const every = Math.max(1, Math.ceil(answers.length / n));
  return answers.filter((_, i) => i % every === 0);
}

/** The answers over the p99 of `answers`, and up to `sampleSize` of the others, attributed to `windows`. */
export function tailEvidence(
  windows: readonly Window[],
  answers: readonly Timed[],
  sampleSize = 200,
): TailEvidence {
  const times = answers.map((a) => a.answered - a.sent);
  const p99 = percentile(times, 99);
  const slow = answers.filter((a) => a.answered - a.sent > p99);
  const ordinary = evenSample(
    answers.filter((a) => a.answered - a.sent <= p99),
    sampleSize,
  );
  const worst = (f: (w: Window) => number | undefined) => round(worstOf(windows, f), 1);
  const ops = windows.flatMap((w) => Object.entries(w.temporal)).sort(([, x], [, y]) => y.p99Ms - x.p99Ms);
  const top = ops.find(([, l]) => Number.isFinite(l.p99Ms));
  return {
    windowMs: settings.evidenceWindowMs,
    windows: windows.length,
    p99Ms: round(p99, 1),
    slow: attribute(windows, slow),
    ordinary: attribute(windows, ordinary),
    thresholds: THRESHOLDS,
    worst: {
      apiLoopMs: worst((w) => w.api?.loopMaxMs),
      workerLoopMs: worst((w) => w.worker?.loopMaxMs),
      apiGcMs: worst((w) => w.api?.gcMaxMs),
      workerGcMs: worst((w) => w.worker?.gcMaxMs),
      workflowTaskSchedToStartP99Ms: worst((w) => w.workflowTaskSchedToStart?.p99Ms),
      workflowTaskExecutionP99Ms: worst((w) => w.workflowTaskExecution?.p99Ms),
      ...(top ? { temporal: { op: top[0], p99Ms: top[1].p99Ms } } : {}),
    },
    missing: {
      api: windows.filter((w) => !w.api).length,
      worker: windows.filter((w) => !w.worker).length,
      temporal: windows.filter((w) => !Object.keys(w.temporal).length).length,
    },
  };
}

/** Each cause as a sentence ends: "k overlapped …". */
export const CAUSE_TEXT: Record<Cause, string> = {
  'api event loop': `an API event-loop stall over ${THRESHOLDS.loopMs} ms`,
  'worker event loop': `a worker event-loop stall over ${THRESHOLDS.loopMs} ms`,
  'gc api': `an API GC pause over ${THRESHOLDS.gcMs} ms`,
  'gc worker': `a worker GC pause over ${THRESHOLDS.gcMs} ms`,
  'workflow-task schedule-to-start': `a workflow-task schedule-to-start p99 over ${THRESHOLDS.schedToStartMs} ms`,
  'activity schedule-to-start': `an activity schedule-to-start p99 over ${THRESHOLDS.schedToStartMs} ms`,
  'workflow-task execution': `a workflow-task execution p99 over ${THRESHOLDS.workflowTaskMs} ms`,
  temporal: `a Temporal operation's p99 over ${THRESHOLDS.temporalMs} ms`,
  cpu: `a machine over ${THRESHOLDS.busyPct}% busy or ${THRESHOLDS.stealPct}% stolen`,
};

export const CAUSES = Object.keys(CAUSE_TEXT) as Cause[];

/** A set's verdicts, the most frequent first: "gc worker 5, api event loop 2". */
export const verdictsText = (a: Attribution) =>
  Object.entries(a.verdicts)
    .sort(([, x], [, y]) => y - x)
    .map(([v, n]) => `${v} ${n}`)
    .join(', ');

/** The evidence in sentences: each cause's share of the slow answers beside the ordinary ones'. */
export function describeEvidence(e: TailEvidence): string[] {
  const { slow, ordinary } = e;
  const verdicts = verdictsText;
  return [
    `of the ${slow.n} slowest answers (over the p99, ${e.p99Ms} ms; ${e.windows} windows of ${e.windowMs / 1000} s):`,
    ...CAUSES.map(
      (c) =>
        `  ${slow.overlapped[c] ?? 0} overlapped ${CAUSE_TEXT[c]} (ordinary answers: ${ordinary.overlapped[c] ?? 0} of ${ordinary.n})`,
    ),
    `  waited on (the longest stall): ${verdicts(slow) || 'none'}; ordinary: ${verdicts(ordinary) || 'none'}`,
    `  worst seen: API loop ${e.worst.apiLoopMs} ms, worker loop ${e.worst.workerLoopMs} ms, GC API ${e.worst.apiGcMs} ms, worker ${e.worst.workerGcMs} ms, workflow-task schedule-to-start p99 ${e.worst.workflowTaskSchedToStartP99Ms} ms, execution p99 ${e.worst.workflowTaskExecutionP99Ms} ms${e.worst.temporal ? `, Temporal ${e.worst.temporal.op} p99 ${e.worst.temporal.p99Ms} ms` : ''}`,
    ...(e.missing.api || e.missing.worker || e.missing.temporal
      ? [
          `  windows without a source: API ${e.missing.api}, worker ${e.missing.worker}, Temporal ${e.missing.temporal}`,
        ]
      : []),
  ];
}

/** The TCP ports a process listens on (/proc: its sockets' inodes against the listening table). */
function listeningPorts(pid: number): number[] {
  try {
    const inodes = new Set(
      readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
        try {
          return [/^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1]].filter(Boolean);
        } catch {
          return [];
        }
      }),
    );
    return ['tcp', 'tcp6'].flatMap((t) =>
      readFileSync(`/proc/${pid}/net/${t}`, 'utf8')
        .split('\n')
        .slice(1)
        .map((l) => l.trim().split(/\s+/))
        .filter((f) => f[3] === '0A' && inodes.has(f[9] as string))
        .map((f) => Number.parseInt((f[1] as string).split(':')[1] as string, 16)),
    );
  } catch {
    return [];
  }
}

const fetchText = (url: string, ms = 2_000) =>
  fetch(url, { signal: AbortSignal.timeout(ms) })
    .then((r) => (r.ok ? r.text() : undefined))
    .catch(() => undefined);

/**
 * The dev server's /metrics: `npm start` lets it pick a free port, so the port of Temporal's
 * that answers /metrics with its request latencies.
 */
export async function temporalMetricsUrl(b: Bench): Promise<string | undefined> {
  for (const pid of b.stack.pidsOf('temporal')) {
    for (const port of listeningPorts(pid)) {
      const url = `http://127.0.0.1:${port}/metrics`;
      if ((await fetchText(url))?.includes('service_latency')) return url;
    }
  }
  return undefined;
}

/**
 * Reads the API's, the worker's and Temporal's /metrics every `settings.evidenceWindowMs` until
 * stopped; `stop()` gives the windows between the reads. A source that cannot be read is left
 * out of its windows (`missing` counts them).
 */
export async function sampleEvidence(b: Bench): Promise<{ stop: () => Promise<Window[]> }> {
  const urls = {
    api: `${b.stack.api}/metrics`,
    worker: `http://127.0.0.1:${b.stack.env.WORKER_HTTP_PORT}/metrics`,
    temporal: await temporalMetricsUrl(b),
  };
  const read = async (): Promise<Scrape> => {
    const at = Date.now();
    const [api, worker, temporal] = await Promise.all(
      // A process stalled is when its evidence matters most: waited for, not dropped.
      [urls.api, urls.worker, urls.temporal].map((u) => (u ? fetchText(u, 15_000) : undefined)),
    );
    const parsed = (t: string | undefined) => (t === undefined ? undefined : parseMetrics(t));
    return { at, api: parsed(api), worker: parsed(worker), temporal: parsed(temporal) };
  };
  const windows: Window[] = [];
  let prev = await read();
  let ticks = cpuTicks();
  let busy = Promise.resolve();
  const tick = () => {
    busy = busy.then(async () => {
      const cpu = { busyPct: busyPctSince(ticks), stealPct: stealPctSince(ticks) };
      ticks = cpuTicks();
      const next = await read();
      windows.push(windowOf(prev, next, cpu));
      prev = carried(prev, next);
    });
  };
  const timer = setInterval(tick, settings.evidenceWindowMs);
  return {
    stop: async () => {
      clearInterval(timer);
      tick();
      await busy;
      return windows;
    },
  };
}

/** `launch` timed: each answer accepted is added to `into` with when it was sent and answered. */
export function timedLaunch(launch: () => Promise<Launched>, into: Timed[]): () => Promise<Launched> {
  return async () => {
    const sent = Date.now();
    const r = await launch();
    if (r.ok) into.push({ sent, answered: Date.now() });
    return r;
  };
}
