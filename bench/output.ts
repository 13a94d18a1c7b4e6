import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { figures, MiB, type RunResults } from './figures';
import type { StepResult } from './load';
import { type CpuTicks, stealPctSince } from './proc';
import { chartSvg, markdownTable, svgToPng } from './report';
import { pollSchedule, say, settings } from './settings';
import { ROOT } from './stack';
import { round, summarize } from './stats';

// What a run writes: bench/results/<date>.json (every figure, ratio, goal and pass, the ramps,
// the machine, the settings), <date>.md (the table) and <date>.png (throughput against offered
// load); the Markdown goes to stdout too.

export function writeResults(r: RunResults, cpuAtStart: CpuTicks): void {
  const date = new Date()
    .toISOString()
    .replace(/[:]/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const outDir = path.join(ROOT, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  const json = resultsJson(r, machine(cpuAtStart));
  const base = path.join(outDir, date);
  writeFileSync(`${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  const md = [
    `# pixflow bench — ${json.date}`,
    '',
    `Mode **${settings.mode}** (steps of ${settings.stepMs / 1000} s, ${r.open.awaiting} open flows, run of ${round(r.runMinutes, 1)} min); ${json.machine.cpus} CPUs (${json.machine.cpuModel}), load average at the end ${json.machine.loadAverageAtEnd.join(' / ')}, CPU time taken by the hypervisor (steal) over the run ${json.machine.stealPctOverRun}%.`,
    `A deposit's history: ${r.depositShape.localActivities} local activities, ${r.depositShape.activities} activities (${r.depositShape.activityNames.join(', ')}), ${r.depositShape.signals} signals, ${r.depositShape.updates} update, ${r.depositShape.historyEvents} events.`,
    '',
    markdownTable(json.figures),
    '',
    `![throughput against offered load](${path.basename(base)}.png)`,
    '',
  ].join('\n');
  writeFileSync(`${base}.md`, md);
  const svg = chartSvg(`pixflow bench (${settings.mode}) — throughput against offered load`, [
    { name: 'floor', color: '#888888', points: r.floor.points },
    { name: 'deposits', color: '#1f77b4', points: r.deposits.points },
    { name: 'withdrawals', color: '#d62728', points: r.withdrawals.points },
  ]);
  writeFileSync(`${base}.png`, svgToPng(svg));
  process.stdout.write(`\n${md}\n`);
  say(`wrote ${base}.json, .md and .png`);
}

function machine(cpuAtStart: CpuTicks) {
  return {
    cpus: os.cpus().length,
    cpuModel: os.cpus()[0]?.model,
    memoryGiB: round(os.totalmem() / 1024 ** 3, 1),
    loadAverageAtEnd: os.loadavg().map((x) => round(x)),
    stealPctOverRun: stealPctSince(cpuAtStart),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

/** The JSON file's content; its fields are what other runs are compared on, so they stay put. */
function resultsJson(r: RunResults, machineInfo: ReturnType<typeof machine>) {
  const figs = figures(r);
  const { open, ingress, signalLoop } = r;
  const stepJson = (s: StepResult) => ({ ...s.point, errors: s.errorsBy, stealPct: s.stealPct });
  return {
    date: new Date().toISOString(),
    mode: settings.mode,
    settings,
    machine: machineInfo,
    runMinutes: round(r.runMinutes, 1),
    depositShape: r.depositShape,
    floor: r.floor,
    deposits: r.deposits,
    withdrawals: r.withdrawals,
    ingress: {
      notifications: ingress.notifications,
      concurrency: settings.ingressConcurrency,
      acceptedPerSecond: round(ingress.acceptedPerSecond),
      signalledPerSecond: round(ingress.signalledPerSecond),
      latency: summarize(ingress.latenciesMs),
      errors: ingress.errors,
      signalLoop: { perSecond: round(signalLoop.perSecond), latency: summarize(signalLoop.latenciesMs) },
    },
    tokens: {
      requests: r.tokens.inWindow,
      requestsWholeRun: r.tokens.wholeRun,
      workerProcesses: 1,
      minutes: round(r.runMinutes, 1),
      window: settings.tokenMinutes,
    },
    openFlows: {
      asked: settings.openFlows,
      awaitingPayment: open.awaiting,
      secondsToOpen: round(open.secondsToOpen),
      rssMiB: {
        before: round(open.rssBefore / MiB),
        afterOpening: round(open.rssOpen / MiB),
        peak: round(open.rssPeak / MiB),
      },
      throughputNoneOpen: stepJson(open.baseline),
      throughputJustOpened: stepJson(open.justOpened),
      settledSeconds: open.settledSeconds,
      /** How long past the poll schedule the early polls went on (a backlog delays them). */
      pollsLateSeconds: open.polls.lateSeconds,
      pollsQuiet: open.polls.quiet,
      stillAwaiting: open.stillAwaiting,
      throughputOpen: stepJson(open.atLoad),
      pollScheduleMs: pollSchedule(),
    },
    figures: figs,
    allPass: figs.every((f) => f.pass !== false),
  };
}
