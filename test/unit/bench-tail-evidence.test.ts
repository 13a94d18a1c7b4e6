import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { parseMetrics } from '../../bench/prom-text';
import {
  attribute,
  carried,
  describeEvidence,
  evenSample,
  histDelta,
  histograms,
  histQuantile,
  stallsDuring,
  stallsOf,
  tailEvidence,
  temporalLatencies,
  verdictOf,
  type Window,
  windowOf,
} from '../../bench/tail-evidence';
import { createApiMetrics } from '../../common/metrics';

// The peak's tail evidence (bench/tail-evidence.ts): reading /metrics, histogram deltas and
// quantiles, and what the slow answers are attributed to.

/** Temporal's dev server's exposition, as it writes it (seconds), for two operations. */
const temporalText = (startN: number, slowN: number) => `# HELP service_latency latency
# TYPE service_latency histogram
service_latency_bucket{namespace="default",operation="StartWorkflowExecution",service_name="frontend",le="0.01"} ${startN}
service_latency_bucket{namespace="default",operation="StartWorkflowExecution",service_name="frontend",le="0.5"} ${startN + slowN}
service_latency_bucket{namespace="default",operation="StartWorkflowExecution",service_name="frontend",le="+Inf"} ${startN + slowN}
service_latency_count{namespace="default",operation="StartWorkflowExecution",service_name="frontend"} ${startN + slowN}
service_latency_sum{namespace="default",operation="StartWorkflowExecution",service_name="frontend"} ${startN * 0.005 + slowN * 0.3}
service_latency_bucket{namespace="default",operation="ListNexusEndpoints",service_name="matching",le="+Inf"} ${2 + slowN}
service_latency_count{namespace="default",operation="ListNexusEndpoints",service_name="matching"} ${2 + slowN}
service_latency_sum{namespace="default",operation="ListNexusEndpoints",service_name="matching"} ${240 + slowN * 60}
service_latency_bucket{namespace="default",operation="PollWorkflowTaskQueue",service_name="matching",le="+Inf"} 9
service_latency_count{namespace="default",operation="PollWorkflowTaskQueue",service_name="matching"} 9
service_latency_sum{namespace="default",operation="PollWorkflowTaskQueue",service_name="matching"} 540
service_latency_userlatency_bucket{namespace="default",operation="StartWorkflowExecution",service_name="frontend",le="+Inf"} 3
`;

/** The SDK's histogram (milliseconds), over two task queues. */
const sdkText = (
  n: number,
  slow: number,
) => `temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="pixflow",le="10"} ${n}
temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="pixflow",le="100"} ${n + slow}
temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="pixflow",le="+Inf"} ${n + slow}
temporal_workflow_task_schedule_to_start_latency_count{task_queue="pixflow"} ${n + slow}
temporal_workflow_task_schedule_to_start_latency_sum{task_queue="pixflow"} ${n * 5 + slow * 80}
temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="sticky-1",le="10"} 1
temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="sticky-1",le="100"} 1
temporal_workflow_task_schedule_to_start_latency_bucket{task_queue="sticky-1",le="+Inf"} 1
temporal_workflow_task_schedule_to_start_latency_count{task_queue="sticky-1"} 1
temporal_workflow_task_schedule_to_start_latency_sum{task_queue="sticky-1"} 2
`;

const base = (t0: number, t1: number, over: Partial<Window> = {}): Window => ({
  t0,
  t1,
  busyPct: 40,
  stealPct: 0,
  api: { loopMaxMs: 12, loopP99Ms: 11, gcCount: 3, gcMs: 4, gcMaxMs: 2 },
  worker: { loopMaxMs: 15, loopP99Ms: 12, gcCount: 5, gcMs: 8, gcMaxMs: 3 },
  workflowTaskSchedToStart: { n: 50, p99Ms: 9, meanMs: 4 },
  temporal: { 'frontend:StartWorkflowExecution': { n: 50, p99Ms: 20, meanMs: 8 } },
  ...over,
});

describe('reading /metrics', () => {
  it('parses samples with labels, escapes and +Inf, and skips comments', () => {
    const s = parseMetrics('# HELP x y\nfoo{a="b\\"c",le="+Inf"} 3\nbar 1.5e-3\nbroken line\n');
    expect(s).toEqual([
      { name: 'foo', labels: { a: 'b"c', le: '+Inf' }, value: 3 },
      { name: 'bar', labels: {}, value: 0.0015 },
    ]);
  });

  it("sums a histogram's series, in ms whatever its unit, and leaves other metrics of the same prefix out", () => {
    const h = histograms(
      parseMetrics(sdkText(10, 0)),
      'temporal_workflow_task_schedule_to_start_latency',
    ).get('');
    expect(h).toEqual({
      buckets: [
        [10, 11],
        [100, 11],
        [Number.POSITIVE_INFINITY, 11],
      ],
      count: 11,
      sumMs: 52,
    });
    const t = histograms(parseMetrics(temporalText(4, 0)), 'service_latency', (l) => l.operation, true);
    expect(t.get('StartWorkflowExecution')?.buckets[0]).toEqual([10, 4]);
    expect(t.get('StartWorkflowExecution')?.count).toBe(4);
  });

  it('takes deltas between scrapes, the later whole when the process restarted', () => {
    const read = (n: number) =>
      histograms(parseMetrics(sdkText(n, 2)), 'temporal_workflow_task_schedule_to_start_latency').get(
        '',
      ) as never;
    const d = histDelta(read(10), read(30));
    expect(d.count).toBe(20);
    expect(d.buckets[0]).toEqual([10, 20]);
    expect(histDelta(read(30), read(5)).count).toBe(8);
  });

  it('interpolates quantiles within a bucket, the highest finite bound in +Inf, NaN when empty', () => {
    const h = {
      buckets: [
        [10, 90],
        [100, 100],
        [Number.POSITIVE_INFINITY, 100],
      ] as [number, number][],
      count: 100,
      sumMs: 0,
    };
    expect(histQuantile(h, 0.5)).toBeCloseTo((10 * 50) / 90);
    expect(histQuantile(h, 0.99)).toBeCloseTo(10 + (90 * 9) / 10);
    const inf = {
      buckets: [
        [10, 1],
        [Number.POSITIVE_INFINITY, 5],
      ] as [number, number][],
      count: 5,
      sumMs: 0,
    };
    expect(histQuantile(inf, 0.99)).toBe(10);
    expect(histQuantile({ buckets: [], count: 0, sumMs: 0 }, 0.99)).toBeNaN();
  });

  it("reads Temporal's operations between scrapes, leaving out those that wait by design", () => {
    const lat = temporalLatencies(parseMetrics(temporalText(100, 0)), parseMetrics(temporalText(190, 10)));
    expect(Object.keys(lat)).toEqual(['frontend:StartWorkflowExecution']);
    expect(lat['frontend:StartWorkflowExecution']?.n).toBe(100);
    expect(lat['frontend:StartWorkflowExecution']?.p99Ms).toBeGreaterThan(10);
    expect(lat['frontend:StartWorkflowExecution']?.meanMs).toBeCloseTo((90 * 5 + 10 * 300) / 100, 0);
  });

  it("reads a real API registry's event-loop stall and GC pause since the last scrape", async () => {
    const metrics = createApiMetrics();
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const first = parseMetrics(await metrics.registry.metrics());
    // The scrape restarts the delay's clock: it counts from the loop's next turn, 10 ms on.
    await new Promise((r) => setTimeout(r, 30));
    const until = Date.now() + 80;
    while (Date.now() < until) {
      // The event loop held, as a long synchronous task holds it.
    }
    const garbage = Array.from({ length: 200_000 }, (_, i) => ({ i }));
    gc();
    await new Promise((r) => setTimeout(r, 100));
    const second = parseMetrics(await metrics.registry.metrics());
    const stalls = stallsOf(first, second, 'pixflow_api_');
    expect(garbage.length).toBe(200_000);
    expect(stalls.loopMaxMs).toBeGreaterThanOrEqual(60);
    expect(stalls.gcMaxMs).toBeGreaterThan(0);
    expect(stalls.gcCount).toBeGreaterThan(0);
    // Read again at once: the stall is the last scrape's, not this one's.
    const third = stallsOf(second, parseMetrics(await metrics.registry.metrics()), 'pixflow_api_');
    expect(third.loopMaxMs).toBeLessThan(60);
  });

  it('makes a window of two scrapes, a source that failed left out', () => {
    const w = windowOf(
      { at: 0, worker: parseMetrics(sdkText(10, 0)), temporal: parseMetrics(temporalText(1, 0)) },
      { at: 5000, worker: parseMetrics(sdkText(20, 5)), temporal: parseMetrics(temporalText(2, 0)) },
      { busyPct: 50, stealPct: 1 },
    );
    expect(w.api).toBeUndefined();
    expect(w.worker?.loopMaxMs).toBe(0);
    expect(w.workflowTaskSchedToStart?.n).toBe(15);
    expect(w.workflowTaskSchedToStart?.p99Ms).toBeGreaterThan(50);
    expect(w.temporal['frontend:StartWorkflowExecution']?.n).toBe(1);
  });

  it('after a read that failed, the next window sees what the source gained since its last reading', () => {
    const first = { at: 0, worker: parseMetrics(sdkText(10, 0)) };
    const failed = { at: 5000 };
    const third = { at: 10_000, worker: parseMetrics(sdkText(20, 3)) };
    expect(windowOf(first, failed, { busyPct: 0, stealPct: 0 }).worker).toBeUndefined();
    const w = windowOf(carried(first, failed), third, { busyPct: 0, stealPct: 0 });
    expect(w.t0).toBe(5000);
    expect(w.workflowTaskSchedToStart?.n).toBe(13);
  });
});

describe('attributing the slow answers', () => {
  const windows = [
    base(0, 5000),
    base(5000, 10_000, { api: { loopMaxMs: 180, loopP99Ms: 20, gcCount: 2, gcMs: 130, gcMaxMs: 120 } }),
    base(10_000, 15_000, {
      workflowTaskSchedToStart: { n: 40, p99Ms: 240, meanMs: 30 },
      temporal: { 'history:RecordWorkflowTaskStarted': { n: 40, p99Ms: 150, meanMs: 20 } },
    }),
    base(15_000, 20_000, { busyPct: 97 }),
    base(20_000, 25_000, { workflowTaskExecution: { n: 30, p99Ms: 130, meanMs: 40 } }),
  ];

  it('sees the stalls of every window an answer spans, and none of the others', () => {
    expect(stallsDuring(windows, { sent: 1000, answered: 1200 })).toEqual([]);
    expect(stallsDuring(windows, { sent: 4900, answered: 5300 }).map((s) => s.cause)).toEqual([
      'api event loop',
      'gc api',
    ]);
    const t = stallsDuring(windows, { sent: 11_000, answered: 11_400 });
    expect(t).toEqual([
      { cause: 'workflow-task schedule-to-start', ms: 240 },
      { cause: 'temporal', ms: 150, what: 'history:RecordWorkflowTaskStarted' },
    ]);
    expect(stallsDuring(windows, { sent: 16_000, answered: 16_300 })).toEqual([
      { cause: 'cpu', ms: 0, what: 'busy 97%, steal 0%' },
    ]);
    expect(stallsDuring(windows, { sent: 21_000, answered: 21_300 })).toEqual([
      { cause: 'workflow-task execution', ms: 130 },
    ]);
  });

  it('lets a window with nothing measured (a NaN quantile) hide no other window’s stall', () => {
    const empty = { n: 0, p99Ms: Number.NaN, meanMs: Number.NaN };
    const withEmpty = [
      base(0, 5000, { workflowTaskSchedToStart: empty, workflowTaskExecution: empty }),
      base(5000, 10_000, {
        workflowTaskSchedToStart: { n: 40, p99Ms: 240, meanMs: 30 },
        workflowTaskExecution: { n: 40, p99Ms: 130, meanMs: 40 },
      }),
    ];
    expect(stallsDuring(withEmpty, { sent: 4000, answered: 6000 }).map((s) => s.cause)).toEqual([
      'workflow-task schedule-to-start',
      'workflow-task execution',
    ]);
    const e = tailEvidence(withEmpty, [{ sent: 4000, answered: 6000 }]);
    expect(e.worst).toMatchObject({ workflowTaskSchedToStartP99Ms: 240, workflowTaskExecutionP99Ms: 130 });
  });

  it('gives the longest stall as the verdict, a GC pause within its own process stall as the cause', () => {
    expect(verdictOf(stallsDuring(windows, { sent: 6000, answered: 6300 }))).toBe('gc api');
    expect(
      verdictOf([
        { cause: 'api event loop', ms: 200 },
        { cause: 'gc api', ms: 30 },
      ]),
    ).toBe('api event loop');
    expect(
      verdictOf([
        { cause: 'gc worker', ms: 90 },
        { cause: 'api event loop', ms: 100 },
      ]),
    ).toBe('api event loop');
    expect(verdictOf([{ cause: 'temporal', ms: 300, what: 'matching:AddWorkflowTask' }])).toBe(
      'temporal matching:AddWorkflowTask',
    );
    expect(verdictOf([{ cause: 'cpu', ms: 0 }])).toBe('cpu');
    expect(verdictOf([])).toBe('nothing seen');
  });

  it('counts overlaps and verdicts of a set of answers', () => {
    const a = attribute(windows, [
      { sent: 6000, answered: 6400 },
      { sent: 7000, answered: 7500 },
      { sent: 12_000, answered: 12_400 },
      { sent: 1000, answered: 1100 },
    ]);
    expect(a).toEqual({
      n: 4,
      overlapped: { 'api event loop': 2, 'gc api': 2, 'workflow-task schedule-to-start': 1, temporal: 1 },
      verdicts: { 'gc api': 2, 'workflow-task schedule-to-start': 1, 'nothing seen': 1 },
    });
  });

  it("sets the answers over the step's p99 beside a sample of the others, and says so", () => {
    // 300 answers of 50 ms in the quiet windows, 3 of 900 ms in the stalled one.
    const answers = [
      ...Array.from({ length: 300 }, (_, i) => ({ sent: i * 10, answered: i * 10 + 50 })),
      ...[6000, 6500, 7000].map((sent) => ({ sent, answered: sent + 900 })),
    ];
    const e = tailEvidence(windows, answers, 100);
    expect(e.slow.n).toBe(3);
    expect(e.slow.verdicts).toEqual({ 'gc api': 3 });
    expect(e.ordinary.n).toBe(100);
    expect(e.ordinary.overlapped['api event loop'] ?? 0).toBe(0);
    expect(e.worst).toMatchObject({ apiLoopMs: 180, apiGcMs: 120, workflowTaskSchedToStartP99Ms: 240 });
    expect(e.worst.temporal).toEqual({ op: 'history:RecordWorkflowTaskStarted', p99Ms: 150 });
    const text = describeEvidence(e).join('\n');
    expect(text).toContain('of the 3 slowest answers');
    expect(text).toContain('3 overlapped an API event-loop stall over 50 ms (ordinary answers: 0 of 100)');
    expect(text).toContain('waited on (the longest stall): gc api 3; ordinary: nothing seen 100');
  });

  it('samples evenly', () => {
    expect(evenSample([1, 2, 3, 4, 5, 6, 7], 3)).toEqual([1, 4, 7]);
    expect(evenSample([1, 2], 5)).toEqual([1, 2]);
  });
});
