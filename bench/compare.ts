import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, round } from './stats';

// `npm run bench:compare -- <base-rev> [<rev>]`: what a change does to the CPU a request costs, the
// change and its baseline measured in the same run. The probe (probe.ts, its PROBE_* settings)
// runs on a fresh stack of each in turn, A B B A (COMPARE_ROUNDS pairs), so a drift of the
// machine meets both alike; each process's CPU per request is the median of its runs. The
// baseline (and <rev>, when given; else this checkout as it is) is a detached worktree with this
// checkout's node_modules and bench/.

const ROOT = path.resolve(__dirname, '..');
const base = process.argv[2] ?? '';
const head = process.argv[3];
const rounds = Number(process.env.COMPARE_ROUNDS ?? 2);
if (!base) {
  console.error(
    'usage: npm run bench:compare -- <base-rev>   (PROBE_KIND, PROBE_RATE, PROBE_N, COMPARE_ROUNDS)',
  );
  process.exit(2);
}

interface ProbeFigures {
  answered: number;
  failures: number;
  answerMs: { p50: number; p99: number };
  cpuMsPerRequest: Record<string, number>;
}

const git = (...args: string[]) => {
  const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

function checkoutOf(rev: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-compare-'));
  git('worktree', 'add', '--detach', dir, rev);
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
  if (existsSync(path.join(ROOT, '.cache'))) symlinkSync(path.join(ROOT, '.cache'), path.join(dir, '.cache'));
  // The same probe drives both: the baseline's own may predate what this one measures.
  cpSync(path.join(ROOT, 'bench'), path.join(dir, 'bench'), { recursive: true });
  return dir;
}

function probe(dir: string, out: string): Promise<ProbeFigures> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'bench/probe.ts'], {
      cwd: dir,
      env: { ...process.env, PROBE_JSON: out },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('exit', (code) =>
      code === 0
        ? resolve(JSON.parse(readFileSync(out, 'utf8')) as ProbeFigures)
        : reject(new Error(`probe in ${dir} exited ${code}`)),
    );
  });
}

function table(runs: Record<'base' | 'head', ProbeFigures[]>) {
  const parts = [
    ...new Set(Object.values(runs).flatMap((rs) => rs.flatMap((r) => Object.keys(r.cpuMsPerRequest)))),
  ];
  const med = (v: 'base' | 'head', f: (r: ProbeFigures) => number) => round(median(runs[v].map(f)));
  const rows = parts
    .map((p) => ({
      p,
      b: med('base', (r) => r.cpuMsPerRequest[p] ?? 0),
      h: med('head', (r) => r.cpuMsPerRequest[p] ?? 0),
    }))
    .filter((x) => x.b > 0.05 || x.h > 0.05);
  const total = (v: 'base' | 'head') =>
    med(v, (r) => Object.values(r.cpuMsPerRequest).reduce((a, x) => a + x, 0));
  const line = (name: string, b: number, h: number) =>
    `| ${name} | ${b} | ${h} | ${b > 0 ? round(h / b) : 'n/a'} |`;
  return [
    `| CPU ms per request (median of ${rounds}) | ${base} | ${head ?? 'this checkout'} | ratio |`,
    '|---|---|---|---|',
    ...rows.map((x) => line(x.p, x.b, x.h)),
    line('**all**', total('base'), total('head')),
    line(
      'answer p50 (ms)',
      med('base', (r) => r.answerMs.p50),
      med('head', (r) => r.answerMs.p50),
    ),
    line(
      'answer p99 (ms)',
      med('base', (r) => r.answerMs.p99),
      med('head', (r) => r.answerMs.p99),
    ),
    line(
      'failed requests',
      med('base', (r) => r.failures),
      med('head', (r) => r.failures),
    ),
  ].join('\n');
}

async function main() {
  const dirs = { base: checkoutOf(base), head: head ? checkoutOf(head) : ROOT };
  const runs: Record<'base' | 'head', ProbeFigures[]> = { base: [], head: [] };
  try {
    const order = Array.from({ length: rounds }, (_, i) =>
      i % 2 === 0 ? (['base', 'head'] as const) : (['head', 'base'] as const),
    ).flat();
    for (const [i, v] of order.entries()) {
      console.log(`[compare] run ${i + 1} of ${order.length}: ${v}`);
      runs[v].push(await probe(dirs[v], path.join(os.tmpdir(), `pixflow-compare-${process.pid}-${i}.json`)));
    }
    console.log(
      `\n${process.env.PROBE_KIND ?? 'deposits'} at ${process.env.PROBE_RATE ?? 10}/s, ${process.env.PROBE_N ?? 400} requests a run\n`,
    );
    console.log(table(runs));
  } finally {
    for (const dir of new Set([dirs.base, dirs.head]).values()) {
      if (dir === ROOT) continue;
      git('worktree', 'remove', '--force', dir);
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
