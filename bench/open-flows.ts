import { openFlowsFigures } from './figures';
import { type Bench, connect, startStack } from './harness';
import { markdownTable } from './report';
import { say, settings } from './settings';
import { openFlows } from './steps/open-flows';

// `npm run bench:open-flows [-- --quick]`: the open-flows part alone, on a fresh stack, without
// the floors' ramps and saturation rounds (it offers at its own rate, BENCH_OPEN_FLOWS_RATE). Its
// figures are printed, not written to bench/results: a full run's are the record.

async function main() {
  const stack = await startStack();
  // start.ts takes the API Pix listener's port for the PSP it runs, with certificates the bench's
  // own config (and its floors') would otherwise be asked for.
  delete stack.env.API_PIX_WEBHOOK_PORT;
  const b = await connect(stack).catch(async (err) => {
    await stack.stop();
    throw err;
  });
  try {
    await measure(b);
  } finally {
    await b.close();
  }
}

async function measure(b: Bench) {
  const o = await openFlows(b);
  const rows = openFlowsFigures({ openFlows: o });
  process.stdout.write(`\n${markdownTable(rows)}\n\n`);
  const samples = o.samples.map((s) => ({
    open: s.open,
    atS: Math.round(s.atMs / 1000),
    workerRssMiB: Math.round(s.workerRss / 1048576),
    workerHeapMiB: Math.round(s.workerHeapUsed / 1048576),
    apiRssMiB: Math.round(s.apiRss / 1048576),
    apiHeapMiB: Math.round(s.apiHeapUsed / 1048576),
    cache: s.stickyCache,
  }));
  process.stdout.write(`${JSON.stringify({ settings: settings.openFlows, samples })}\n`);
  say('open flows done');
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
