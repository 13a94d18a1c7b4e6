import { openFlowsFigures } from './figures';
import { runOnFreshStack } from './harness';
import { markdownTable } from './report';
import { say, settings } from './settings';
import { openFlows } from './steps/open-flows';

// `npx tsx bench/open-flows.ts [--quick]`: the open-flows part alone, on a fresh stack, without
// the floors' ramps and saturation rounds (it offers at its own rate, BENCH_OPEN_FLOWS_RATE). Its
// figures and samples are printed, not written to bench/results: a full run's are the record.

const MiB = 1024 * 1024;

runOnFreshStack(async (b) => {
  const o = await openFlows(b);
  process.stdout.write(`\n${markdownTable(openFlowsFigures({ openFlows: o }))}\n\n`);
  const samples = o.samples.map((s) => ({
    open: s.open,
    atS: Math.round(s.atMs / 1000),
    workerRssMiB: Math.round(s.workerRss / MiB),
    workerHeapMiB: Math.round(s.workerHeapUsed / MiB),
    apiRssMiB: Math.round(s.apiRss / MiB),
    apiHeapMiB: Math.round(s.apiHeapUsed / MiB),
    cache: s.stickyCache,
  }));
  process.stdout.write(`${JSON.stringify({ settings: settings.openFlows, samples })}\n`);
  say('open flows done');
});
