import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { figures, type RunResults, ran } from './figures';
import type { Machine } from './machine';
import { chartSvg, markdownTable, type Series, svgToPng } from './report';
import { say, settings } from './settings';
import { ROOT } from './stack';
import { round, summarize } from './stats';

// What a run writes: bench/results/<date>.json (every figure, ratio, goal and pass, the ramps,
// the sweeps, the machine, the commit, the settings), <date>.md (the table) and <date>.png
// (throughput against offered load); the Markdown goes to stdout too.

export function writeResults(r: RunResults, machineInfo: Machine): void {
  const date = new Date()
    .toISOString()
    .replace(/[:]/g, '-')
    .replace(/\.\d+Z$/, 'Z');
  const outDir = path.join(ROOT, 'bench', 'results');
  mkdirSync(outDir, { recursive: true });
  const json = resultsJson(r, machineInfo);
  const base = path.join(outDir, date);
  writeFileSync(`${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
  const md = markdown(r, json, path.basename(base));
  writeFileSync(`${base}.md`, md);
  // The saturation's first round: each of its ramps began where a single ramp would.
  const first = r.saturation.rounds[0]?.ramps;
  const series: Series[] = [
    { name: 'floor', color: '#888888', points: r.floor.points },
    { name: 'deposits', color: '#1f77b4', points: first?.deposits.points ?? [] },
    { name: 'same-work deposits', color: '#7fb3d9', points: first?.['same-work deposits'].points ?? [] },
    { name: 'withdrawal floor', color: '#e6a0a0', points: r.withdrawals.floor.points },
    { name: 'withdrawals', color: '#d62728', points: first?.withdrawals.points ?? [] },
    {
      name: 'same-work withdrawals',
      color: '#f0a35e',
      points: first?.['same-work withdrawals'].points ?? [],
    },
  ];
  if (ran(r.onboarding)) {
    series.push(
      { name: 'onboarding floor', color: '#bbbbbb', points: r.onboarding.floor.points },
      { name: 'onboardings', color: '#2ca02c', points: r.onboarding.points },
    );
  }
  const svg = chartSvg(`pixflow bench (${settings.mode}) — throughput against offered load`, series);
  writeFileSync(`${base}.png`, svgToPng(svg));
  process.stdout.write(`\n${md}\n`);
  say(`wrote ${base}.json, .md and .png`);
}

function markdown(r: RunResults, json: ReturnType<typeof resultsJson>, base: string): string {
  const m = json.machine;
  const c = r.commit;
  const s = r.depositShape;
  const parts = Object.entries(r.parts)
    .map(([k, p]) => `${k} ${p.notRun ? 'not run' : `${p.minutes} min (steal ${p.stealPct}%)`}`)
    .join(', ');
  return [
    `# pixflow bench — ${json.date}`,
    '',
    `Mode **${settings.mode}**, run of ${round(r.runMinutes, 1)} min, on commit \`${c.commit.slice(0, 12)}\`${c.dirty ? ' **with uncommitted changes**' : ''} (${c.branch}); ${m.cpus} CPUs (${m.cpuModel}), load average ${m.loadAverageAtStart.join(' / ')} at the start and ${m.loadAverageAtEnd.join(' / ')} at the end, CPU time taken by the hypervisor (steal) over the run ${m.stealPctOverRun}%.`,
    `Parts: ${parts}.`,
    `A deposit's history: ${s.localActivities} local activities, ${s.activities} activities (${s.activityNames.join(', ')}), ${s.signals} signals, ${s.updates} update, ${s.historyEvents} events, ${s.historyBytes} bytes.`,
    '',
    markdownTable(json.figures),
    '',
    `![throughput against offered load](${base}.png)`,
    '',
  ].join('\n');
}

/** The JSON file's content: what other runs are compared on. */
function resultsJson(r: RunResults, machineInfo: Machine) {
  const figs = figures(r);
  const ingress = ran(r.ingress)
    ? {
        notifications: r.ingress.ingress.notifications,
        concurrency: settings.ingressConcurrency,
        acceptedPerSecond: round(r.ingress.ingress.acceptedPerSecond),
        signalledPerSecond: round(r.ingress.ingress.signalledPerSecond),
        latency: summarize(r.ingress.ingress.latenciesMs),
        errors: r.ingress.ingress.errors,
        signalLoop: {
          perSecond: round(r.ingress.signalLoop.perSecond),
          latency: summarize(r.ingress.signalLoop.latenciesMs),
        },
      }
    : r.ingress;
  const peak = ran(r.peak) ? (({ unpaidTxids: _, ...p }) => p)(r.peak) : r.peak;
  return {
    date: new Date().toISOString(),
    mode: settings.mode,
    commit: r.commit,
    settings,
    machine: machineInfo,
    runMinutes: round(r.runMinutes, 1),
    parts: r.parts,
    depositShape: r.depositShape,
    floor: r.floor,
    saturation: r.saturation,
    withdrawals: r.withdrawals,
    capacity: r.capacity,
    cost: r.cost,
    onboarding: r.onboarding,
    peak,
    ingress,
    tokens: {
      requests: r.tokens.inWindow,
      requestsWholeRun: r.tokens.wholeRun,
      window: settings.tokenMinutes,
    },
    production: r.production,
    openFlows: r.openFlows,
    figures: figs,
    allPass: figs.every((f) => f.pass !== false),
  };
}
