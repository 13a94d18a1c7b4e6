import os from 'node:os';
import type { Maybe, PartTiming, RunResults } from './figures';
import { type Bench, connect, settle, startStack } from './harness';
import { commitOfTree, machine } from './machine';
import { writeResults } from './output';
import { setAuto } from './pixflow';
import { cpuTicks, stealPctSince } from './proc';
import { type Part, partLimitMinutes, partSkipped, say, settings, withinLimit } from './settings';
import type { BenchStack } from './stack';
import { round } from './stats';
import { capacityAtBoundsPart } from './steps/capacity';
import { costPerFlow } from './steps/cost';
import { events } from './steps/events';
import { bareUpdateWithStart, floorRamp } from './steps/floor';
import { bareSignalLoop, ingress, openDeposits } from './steps/ingress';
import { onboardings } from './steps/onboarding';
import { openFlows } from './steps/open-flows';
import { closePeakDeposits, peak, sameWorkPeak } from './steps/peak';
import { production } from './steps/production';
import { type Saturation, saturationRounds } from './steps/saturation';
import { readDepositShape } from './steps/shape';
import { keepDepositsTrickling, pixflowTokenRequests, tokenRequestsInWindow } from './steps/tokens';
import { withdrawalFloor, withdrawalLatency } from './steps/withdrawals';

// `npm run bench [-- --quick] [-- --skip=part,...|--only=part,...]`: one run.
// See bench/README.md. The parts run in this order, each timed with the CPU steal meanwhile.

let running: BenchStack | undefined;
const parts: Record<string, PartTiming> = {};

/** Runs a part of the run, recording how long it took and the steal meanwhile. */
async function timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  const cpu0 = cpuTicks();
  try {
    return await fn();
  } finally {
    parts[name] = { minutes: round((Date.now() - t0) / 60_000, 1), stealPct: stealPctSince(cpu0) };
  }
}

/** A part that can be left out (`--skip`, `--only`) and whose failure does not end the run. */
async function optional<T extends object>(name: Part, fn: () => Promise<T>): Promise<Maybe<T>> {
  const skipped = partSkipped(name);
  if (skipped) {
    parts[name] = { minutes: 0, stealPct: 0, notRun: skipped };
    return { notRun: skipped };
  }
  try {
    return await timed(name, () => withinLimit(fn(), partLimitMinutes(name) * 60_000, name));
  } catch (err) {
    const why = `not run: failed: ${err instanceof Error ? err.message : String(err)}`;
    say(`${name} ${why}`);
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    return { notRun: why };
  }
}

/** Open deposits to notify: the peak's unpaid ones whose QR has minutes left, or new ones. */
async function ingressTargets(b: Bench, peaked: RunResults['peak']): Promise<string[]> {
  const margin = 5 * 60_000;
  const open =
    'unpaidTxids' in peaked
      ? peaked.unpaidTxids
          .filter((u) => u.createdAt + b.config.SANDBOX_DEPOSIT_EXPIRY_MS - margin > Date.now())
          .map((u) => u.txid)
      : [];
  return open.length
    ? open.slice(-settings.ingressNotifications)
    : openDeposits(b, Math.min(settings.ingressNotifications, 500));
}

/** Everything measured on one stack (the dev server), in order. */
async function onTheStack(b: Bench, startedAt: number): Promise<Omit<RunResults, 'production' | 'commit'>> {
  const tokensInWindow = tokenRequestsInWindow(b, startedAt);
  await setAuto(b, settings.autoAfterMs, settings.autoAfterMs);
  const { shape, flowShape } = await timed('shape', () => readDepositShape(b));
  const floor = await timed('floor ramp', () => floorRamp(b, shape));
  const wdFloor = await timed('withdrawal floor ramp', () => withdrawalFloor(b));
  const saturation = await timed('saturation rounds', () =>
    saturationRounds(b, { deposit: floor.saturation, withdrawal: wdFloor.floor.saturation }),
  );
  const sat = (k: keyof Saturation['saturation']) => saturation.saturation[k].median;
  const withdrawn = await timed('withdrawal latency', () =>
    withdrawalLatency(b, wdFloor, sat('withdrawals')),
  );
  const capacity = await optional('capacity', () =>
    capacityAtBoundsPart(b, shape, {
      floor: floor.saturation,
      'same-work': sat('same-work deposits'),
      deposits: sat('deposits'),
    }),
  );
  const costRate = Math.max(0.5, Math.min(sat('deposits'), sat('withdrawals')) / 2);
  const cost = await optional('cost', async () => {
    await settle(b);
    return costPerFlow(b, shape, costRate);
  });
  const onboarding = await optional('onboarding', () => onboardings(b));
  // The same work done plainly sets the pace: pixflow is offered what the same-work floor takes at half.
  const peakRate = Math.max(0.5, sat('same-work deposits') / 2);
  const peaked = await optional('peak', async () => {
    await settle(b);
    const bare = await bareUpdateWithStart(b, shape, round(peakRate));
    const sameWork = await sameWorkPeak(b, peakRate);
    await settle(b);
    return { ...(await peak(b, peakRate)), bareUpdateWithStart: bare, sameWork };
  });
  let notifiedTxids: string[] = [];
  const notified = await optional('ingress', async () => {
    notifiedTxids = await ingressTargets(b, peaked);
    const result = await ingress(b, notifiedTxids);
    return { ingress: result, signalLoop: await bareSignalLoop(b, notifiedTxids.length) };
  });
  const evented = await optional('events', async () => {
    if ('unpaidTxids' in peaked) await closePeakDeposits(b, peaked, notifiedTxids);
    // The ingress part leaves thousands of woken deposits looking themselves up.
    const settled = await settle(b);
    const figures = await events(b, sat('deposits'));
    return { ...figures, settled };
  });
  // Last on this stack: its deposits stay open 30 minutes, and the stack stops after them.
  const opened = await optional('open-flows', async () => {
    await settle(b);
    // Memory, not capacity: offered past saturation, answers fail while their flows still open.
    const underSaturation = sat('deposits') * settings.openFlows.saturationShare;
    const rate = Math.min(settings.openFlows.rate, Math.max(0.5, underSaturation));
    return openFlows(b, { ...settings.openFlows, rate: round(rate) });
  });
  await keepDepositsTrickling(b, startedAt);
  const tokens = { inWindow: await tokensInWindow, wholeRun: await pixflowTokenRequests(b) };
  return {
    runMinutes: 0,
    parts,
    depositShape: flowShape,
    floor,
    saturation,
    withdrawals: withdrawn,
    capacity,
    cost,
    onboarding,
    peak: peaked,
    ingress: notified,
    events: evented,
    openFlows: opened,
    tokens,
  };
}

async function main() {
  const startedAt = Date.now();
  const cpuAtStart = cpuTicks();
  const loadAtStart = os.loadavg().map((x) => round(x));
  const commit = commitOfTree();
  say(
    `mode ${settings.mode} on ${commit.commit.slice(0, 12)}${commit.dirty ? ' (uncommitted changes)' : ''}; load average ${loadAtStart.join(' / ')}`,
  );
  const stack = await timed('stack', () => startStack());
  running = stack;
  say(`stack up (worker pid ${stack.workerPid})`);
  const b = await timed('people', () => connect(stack));
  const measured = await onTheStack(b, startedAt);
  await b.close();
  running = undefined;
  const prod = await optional('production', () => production());
  const results: RunResults = {
    ...measured,
    commit,
    production: prod,
    runMinutes: (Date.now() - startedAt) / 60_000,
  };
  writeResults(results, machine(cpuAtStart, loadAtStart));
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
