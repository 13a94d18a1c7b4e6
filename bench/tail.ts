import { depositWorkflowId } from '../contracts/deposit';
import { runOnFreshStack, settle } from './harness';
import type { Launched } from './load';
import { postDeposit, setAuto } from './pixflow';
import {
  busiestThreads,
  busyPctSince,
  cpuPercentBetween,
  cpuSnapshot,
  cpuTicks,
  PeakRss,
  rssBytesOf,
  stealPctSince,
  threadTicks,
} from './proc';
import { sumOf } from './prom-text';
import { settings } from './settings';
import { type Answer, depositMarks, type Stages, stageReport, stagesOf } from './stages';
import { percentile, round } from './stats';
import { offerAndPay } from './steps/peak';
import {
  describeEvidence,
  sampleEvidence,
  stallsDuring,
  tailEvidence,
  verdictOf,
  type Window,
} from './tail-evidence';

// `npm run bench:tail`: the peak in small, to see what makes its slowest answers slow. Deposits
// at TAIL_RATE a second for TAIL_MINUTES on a fresh stack, with the peak's payers (half never
// pay, the others 5-120 s after their QR, a few notifications lost). It prints the answers' p50
// and p99 every 20 s, beside how busy the machine was and the CPU each process used in those
// 20 s; the stages (stages.ts) of the answers over the latency target beside a sample of the
// others; the worker's workflow cache hits and misses, each process's CPU, the worker's peak RSS
// and the steal; then what the answers over the p99 waited on, beside a sample of the others
// (tail-evidence.ts: each process's event-loop stalls, GC pauses, the worker's schedule-to-start,
// Temporal's request latency and the machine's CPU, read every BENCH_EVIDENCE_WINDOW_MS), and
// each of the slowest with its stalls. Not a figure: a tool to find why the peak's p99 is what it is.

const rate = Number(process.env.TAIL_RATE ?? 5.4);
const minutes = Number(process.env.TAIL_MINUTES ?? 6);
const BUCKET_MS = 20_000;

/** The sum of a counter of the worker's SDK metrics over its labels (0 when absent). */
const counter = (metrics: string, name: string): number => sumOf(metrics, name) || 0;

/** The machine's busy share and each part's CPU (% of one core) in each window, as sampled. */
interface WindowCpu {
  busyPct: number;
  parts: Record<string, number>;
  /** Resident memory of the worker and of Temporal at the window's end. */
  rssMiB: { worker: number; temporal: number };
  /** The worker's two busiest threads, % of one core: one at 100% bounds the worker. */
  workerThreads: string;
}

/** Every BUCKET_MS from t0: the CPU each part used in the window just ended. */
function sampleWindows(root: number, pidsOf: (part: string) => number[], out: WindowCpu[]): () => void {
  let snap = cpuSnapshot(root);
  let ticks = cpuTicks();
  const worker = pidsOf('worker')[0] ?? -1;
  let threads = threadTicks(worker);
  const timer = setInterval(() => {
    const next = cpuSnapshot(root);
    const nextThreads = threadTicks(worker);
    out.push({
      busyPct: Math.round(busyPctSince(ticks)),
      parts: Object.fromEntries(
        Object.entries(cpuPercentBetween(snap, next)).map(([part, pct]) => [part, Math.round(pct)]),
      ),
      rssMiB: { worker: rssMiBOf(pidsOf('worker')), temporal: rssMiBOf(pidsOf('temporal')) },
      workerThreads: busiestThreads(threads, nextThreads, BUCKET_MS / 1000, 2)
        .map((t) => `${t.tid === worker ? 'main' : t.name} ${Math.round(t.pct)}`)
        .join(', '),
    });
    snap = next;
    ticks = cpuTicks();
    threads = nextThreads;
  }, BUCKET_MS);
  return () => clearInterval(timer);
}

const rssMiBOf = (pids: number[]) => Math.round(rssBytesOf(pids) / 2 ** 20);

function timeline(answers: Answer[], t0: number, windows: WindowCpu[]): string[] {
  const buckets = new Map<number, number[]>();
  for (const a of answers) {
    const k = Math.floor((a.sent - t0) / BUCKET_MS);
    buckets.set(k, [...(buckets.get(k) ?? []), a.answered - a.sent]);
  }
  return [...buckets]
    .sort(([x], [y]) => x - y)
    .map(([k, v]) => {
      const w = windows[k];
      const cpu = w
        ? `  busy ${w.busyPct}%  ${Object.entries(w.parts)
            .map(([part, pct]) => `${part} ${pct}`)
            .join(
              ' ',
            )}  rss worker ${w.rssMiB.worker} temporal ${w.rssMiB.temporal}  worker threads ${w.workerThreads}`
        : '';
      return `  ${String((k * BUCKET_MS) / 1000).padStart(4)} s  p50 ${round(percentile(v, 50), 0)}  p99 ${round(percentile(v, 99), 0)} ms  over ${settings.latencyTargetMs}: ${v.filter((x) => x > settings.latencyTargetMs).length} of ${v.length}${cpu}`;
    });
}

/** What the answers over the p99 waited on, then the slowest of them (20 at most) with their stalls. */
function printEvidence(windows: Window[], answers: Answer[], t0: number) {
  const e = tailEvidence(windows, answers);
  for (const line of describeEvidence(e)) console.log(line);
  const slowest = answers
    .filter((a) => a.answered - a.sent > e.p99Ms)
    .sort((x, y) => y.answered - y.sent - (x.answered - x.sent))
    .slice(0, 20);
  for (const a of slowest) {
    const stalls = stallsDuring(windows, a);
    const what = stalls.map((s) => `${s.cause}${s.what ? ` (${s.what})` : ''}${s.ms ? ` ${s.ms} ms` : ''}`);
    console.log(
      `  at ${round((a.sent - t0) / 1000, 1)} s: ${a.answered - a.sent} ms, waited on ${verdictOf(stalls)}${what.length ? `: ${what.join(', ')}` : ''}`,
    );
  }
}

runOnFreshStack(async (b) => {
  await setAuto(b, null, settings.autoAfterMs); // the payers pay, not the sandbox
  await settle(b);
  const root = b.stack.child.pid as number;
  const metricsUrl = `http://127.0.0.1:${b.stack.env.WORKER_HTTP_PORT}/metrics`;
  const rss = new PeakRss(() => b.stack.pidsOf('worker'));
  rss.start();
  const ticks = cpuTicks();
  const cpu0 = cpuSnapshot(root);
  const answers: Answer[] = [];
  const launch = async (): Promise<Launched> => {
    const sent = Date.now();
    const r = await postDeposit(b);
    if (r.ok) answers.push({ workflowId: depositWorkflowId(r.id), sent, answered: Date.now() });
    return r;
  };
  const windows: WindowCpu[] = [];
  const evidence = await sampleEvidence(b);
  const t0 = Date.now();
  const stopSampling = sampleWindows(root, b.stack.pidsOf, windows);
  const { offered } = await offerAndPay(b, rate, minutes * 60_000, launch);
  stopSampling();
  const evidenceWindows = await evidence.stop();
  const cpu1 = cpuSnapshot(root);
  const steal = stealPctSince(ticks);
  const rssPeak = await rss.stop();
  const metrics = await (await fetch(metricsUrl)).text();

  const slow = answers.filter((a) => a.answered - a.sent > settings.latencyTargetMs);
  const others = answers.filter((a) => a.answered - a.sent <= settings.latencyTargetMs);
  const sample = others.filter((_, i) => i % Math.max(1, Math.round(others.length / 200)) === 0);
  const marks = await depositMarks(b.stack, [...slow, ...sample]);
  const split = (set: Answer[]) => Promise.all(set.map((a) => stagesOf(b.client, a, marks)));

  console.log(
    `${answers.length} of ${offered.offered} deposits answered at ${rate}/s over ${minutes} min; failed: ${JSON.stringify(offered.errorsBy)}`,
  );
  const times = answers.map((a) => a.answered - a.sent);
  console.log(`  all      p50 ${round(percentile(times, 50), 0)}  p99 ${round(percentile(times, 99), 0)} ms`);
  for (const line of timeline(answers, t0, windows)) console.log(line);
  const report = (name: string, set: Answer[], stages: Stages[]) => {
    console.log(`${name} (${set.length})`);
    for (const line of stageReport(set, stages)) console.log(`  ${line}`);
  };
  report(`answers over ${settings.latencyTargetMs} ms`, slow, await split(slow));
  report('a sample of the others', sample, await split(sample));
  printEvidence(evidenceWindows, answers, t0);
  console.log(
    `workflow cache: ${counter(metrics, 'temporal_sticky_cache_hit')} hits, ${counter(metrics, 'temporal_sticky_cache_miss')} misses, ${counter(metrics, 'temporal_sticky_cache_total_forced_eviction')} evictions`,
  );
  console.log(
    `CPU, % of one core: ${Object.entries(cpuPercentBetween(cpu0, cpu1))
      .map(([part, pct]) => `${part} ${pct}%`)
      .join(', ')}`,
  );
  console.log(`worker RSS peak ${Math.round(rssPeak / 2 ** 20)} MiB; steal ${steal}%`);
});
