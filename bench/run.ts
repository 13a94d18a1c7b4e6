import { connect, startStack } from './harness';
import { writeResults } from './output';
import { sandboxState, setAuto } from './pixflow';
import { cpuTicks } from './proc';
import { say, settings } from './settings';
import type { BenchStack } from './stack';
import { depositLatency, depositRamp } from './steps/deposits';
import { bareUpdateWithStart, floorRamp } from './steps/floor';
import { bareSignalLoop, ingress } from './steps/ingress';
import { openFlows } from './steps/open-flows';
import { readDepositShape } from './steps/shape';
import { keepDepositsTrickling, tokenRequestsInWindow } from './steps/tokens';
import { withdrawals } from './steps/withdrawals';

// `npm run bench [-- --quick]`: one run, one stack, one dev server. See bench/README.md.
// The steps run in this order; their numbers are the figures' in bench/README.md.

let running: BenchStack | undefined;

async function main() {
  const startedAt = Date.now();
  const cpuAtStart = cpuTicks();
  say(
    `mode ${settings.mode}: steps of ${settings.stepMs / 1000} s, ${settings.openFlows} open flows, token window ${settings.tokenMinutes} min`,
  );
  const stack = await startStack();
  running = stack;
  say(`stack up (worker pid ${stack.workerPid})`);
  const b = await connect(stack);
  const tokensInWindow = tokenRequestsInWindow(b, startedAt);
  await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);

  const { shape, depositShape } = await readDepositShape(b);
  const floor = await floorRamp(b, shape); // 1
  const deposits = await depositRamp(b); // 2
  const latency = await depositLatency(b, deposits.saturation); // 3
  const bareUpdate = await bareUpdateWithStart(b, shape, latency.offered);
  const withdrawn = await withdrawals(b); // 7
  const open = await openFlows(b, deposits.saturation); // 6
  const notified = await ingress(b, open.txids); // 4
  const signalLoop = await bareSignalLoop(b, open.txids.length);
  await keepDepositsTrickling(b, startedAt); // 5
  const rssPeak = await open.rss.stop();
  const finalState = await sandboxState(b);
  const tokens = { inWindow: await tokensInWindow, wholeRun: finalState.counters.tokenRequests };
  const runMinutes = (Date.now() - startedAt) / 60_000;

  writeResults(
    {
      runMinutes,
      depositShape,
      floor: { ...floor, bareUpdateWithStart: bareUpdate },
      deposits: { ...deposits, latency },
      withdrawals: withdrawn,
      ingress: notified,
      signalLoop,
      tokens,
      open: { ...open, rssPeak },
    },
    cpuAtStart,
  );
  await b.close();
}

const stopStack = async () => {
  await running?.stop().catch(() => undefined);
};
process.on('SIGINT', () => void stopStack().then(() => process.exit(130)));
process.on('SIGTERM', () => void stopStack().then(() => process.exit(143)));

main().then(
  () => process.exit(0),
  async (err) => {
    process.stderr.write(
      `bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    if (running) process.stderr.write(`last stack output:\n${running.output().slice(-3000)}\n`);
    await stopStack();
    process.exit(1);
  },
);
