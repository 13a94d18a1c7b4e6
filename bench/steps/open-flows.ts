import { workflowCacheSize } from '../../common/worker-tuning';
import type { Bench } from '../harness';
import { step } from '../load';
import {
  growthPerThousandPastCache,
  lastSample,
  type MemorySample,
  mibPerCachedWorkflow,
  promValue,
} from '../memory';
import { postDeposit, setAuto } from '../pixflow';
import { rssBytesOf } from '../proc';
import { say, settings, sleep } from '../settings';
import { round } from '../stats';

// Open flows: deposits opened at a steady rate and never paid (each waits out its 30-minute QR),
// the worker's and the API's memory sampled against how many are open. Past the worker's cache,
// a further open flow should cost it next to nothing: what grows then is kept per flow.

export interface OpenFlows {
  rate: number;
  offered: number;
  /** Answered 201 within the client's timeout (each stays open; so may one whose answer came late). */
  opened: number;
  errorsBy: Record<string, number>;
  /** The worker's cache as the stack ran it (WORKER_MAX_CACHED_WORKFLOWS, or sized from its memory). */
  cacheSize: number;
  samples: MemorySample[];
  /** MiB per further 1,000 open once the cache is full, and over how many samples. */
  workerGrowth: { mibPerThousand: number; samples: number };
  apiGrowth: { mibPerThousand: number; samples: number };
  workerHeapGrowth: { mibPerThousand: number; samples: number };
  /** MiB of worker RSS per cached workflow while the cache filled. */
  mibPerCachedWorkflow: number;
  stealPct: number;
}

const metricsOf = async (url: string): Promise<string> => {
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    return res.ok ? await res.text() : '';
  } catch {
    return ''; // a busy process that does not answer in time: its heap is NaN in that sample
  }
};

/**
 * Deposits created since `t0` that await their payment: what the worker holds open, whether or
 * not their answer reached the bench in time (a start whose answer timed out still runs).
 */
async function openSince(b: Bench, t0: number): Promise<number> {
  const r = await b.pool.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM flows
     WHERE type = 'deposit' AND status = 'awaiting_payment' AND created_at >= to_timestamp($1 / 1000.0)`,
    [t0],
  );
  return r.rows[0]?.n ?? 0;
}

/** One reading: open deposits from the flows table, RSS from /proc, heaps and the cache from each /metrics. */
async function sample(b: Bench, t0: number): Promise<MemorySample> {
  const [worker, api, open] = await Promise.all([
    metricsOf(`http://127.0.0.1:${b.stack.env.WORKER_HTTP_PORT}/metrics`),
    metricsOf(`${b.stack.api}/metrics`),
    openSince(b, t0),
  ]);
  return {
    atMs: Date.now() - t0,
    open,
    workerRss: rssBytesOf(b.stack.pidsOf('worker')),
    apiRss: rssBytesOf(b.stack.pidsOf('api')),
    workerHeapUsed: promValue(worker, 'nodejs_heap_size_used_bytes'),
    workerHeapTotal: promValue(worker, 'nodejs_heap_size_total_bytes'),
    apiHeapUsed: promValue(api, 'nodejs_heap_size_used_bytes'),
    apiHeapTotal: promValue(api, 'nodejs_heap_size_total_bytes'),
    stickyCache: promValue(worker, 'sticky_cache_size'),
  };
}

const mib = (bytes: number) => round(bytes / 1024 / 1024);

/** `count` deposits at `rate`/s, never paid, the stack's memory sampled every `sampleMs`. */
export async function openFlows(
  b: Bench,
  { count, rate, sampleMs } = settings.openFlows,
): Promise<OpenFlows> {
  // As the worker sizes it, from the same environment on the same machine.
  const cacheSize = workflowCacheSize(b.config);
  say(`open flows: ${count} deposits at ${rate}/s, never paid; the worker caches ${cacheSize}...`);
  await setAuto(b, null, settings.autoAfterMs); // nobody pays: every deposit stays open
  const t0 = Date.now();
  const samples: MemorySample[] = [await sample(b, t0)];
  let opened = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      await sleep(sampleMs);
      const s = await sample(b, t0);
      samples.push(s);
      say(
        `   ${s.open} open: worker ${mib(s.workerRss)} MiB (heap ${mib(s.workerHeapUsed)}), API ${mib(s.apiRss)} MiB (heap ${mib(s.apiHeapUsed)}), cache ${s.stickyCache}`,
      );
    }
  })();
  try {
    const r = await step(
      rate,
      (count / rate) * 1000,
      () => postDeposit(b),
      async () => [],
      {
        drainMs: 0,
        onAccepted: () => {
          opened += 1;
        },
      },
    );
    // A last reading once the answers have settled in.
    await sleep(sampleMs);
    sampling = false;
    await sampler;
    samples.push(await sample(b, t0));
    const result: OpenFlows = {
      rate,
      offered: r.offered,
      opened,
      errorsBy: r.errorsBy,
      cacheSize,
      samples,
      workerGrowth: growthPerThousandPastCache(samples, cacheSize, 'workerRss'),
      apiGrowth: growthPerThousandPastCache(samples, cacheSize, 'apiRss'),
      workerHeapGrowth: growthPerThousandPastCache(samples, cacheSize, 'workerHeapUsed'),
      mibPerCachedWorkflow: mibPerCachedWorkflow(samples, cacheSize),
      stealPct: r.stealPct,
    };
    const { samples: _, ...shown } = result;
    const last = lastSample(samples);
    say(`   ${JSON.stringify({ ...shown, workerRssMiB: mib(last?.workerRss ?? Number.NaN) })}`);
    return result;
  } finally {
    sampling = false;
    await sampler;
    await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);
  }
}
