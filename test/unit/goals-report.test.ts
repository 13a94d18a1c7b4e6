import { describe, expect, it } from 'vitest';
import {
  goalsAreCurrent,
  latestFullRun,
  performanceGoals,
  readmeHeadlines,
  runsSideBySide,
} from '../../bench/goals-report';

// docs/performance.md's goals and the README's performance table are generated from the latest
// full run in bench/results: stale, this fails (`npm run docs:bench` writes them again).

describe('the goals the pages show', () => {
  it('are the latest full run’s', () => {
    const run = latestFullRun();
    expect(run, 'a full run in bench/results').toBeDefined();
    expect(goalsAreCurrent(run), 'run npm run docs:bench').toBe(true);
  });

  it('go stale when the run measured otherwise', () => {
    const run = latestFullRun();
    if (!run) throw new Error('no full run in bench/results');
    const goal = run.figures.findIndex((f) => f.goal !== undefined);
    const figures = run.figures.map((f, i) => (i === goal ? { ...f, pass: !f.pass } : f));
    expect(goalsAreCurrent({ ...run, figures })).toBe(false);
    expect(performanceGoals({ ...run, figures })).not.toBe(performanceGoals(run));
  });

  it('name every headline figure, and fail loudly when one is missing', () => {
    const run = latestFullRun();
    if (!run) throw new Error('no full run in bench/results');
    expect(
      readmeHeadlines(run)
        .split('\n')
        .filter((l) => l.startsWith('| ')),
    ).toHaveLength(8);
    const figures = run.figures.filter((f) => !f.name.startsWith('peak: POST /v1/deposits p99'));
    expect(() => readmeHeadlines({ ...run, figures })).toThrow(/peak: POST/);
  });

  it('set two runs side by side, a goal in one row whatever counts and rates its name carries', () => {
    const run = latestFullRun();
    if (!run) throw new Error('no full run in bench/results');
    const goals = run.figures.filter((f) => f.goal !== undefined);
    const [first, second] = goals;
    if (!first || !second) throw new Error('fewer than two goals');
    // The earlier run: its numbers in the names differ, its first goal's verdict is the other,
    // and it measured a goal the latest run has not.
    const before = {
      ...run,
      date: '2026-01-01T00:00:00.000Z',
      figures: [
        ...run.figures
          .filter((f) => f !== second)
          .map((f) => ({ ...f, name: f.name.replace(/\d+/g, '7'), pass: f === first ? !f.pass : f.pass })),
        { name: 'a goal since left out', value: 1, unit: '', goal: '≤ 2', pass: true },
      ],
    };
    const rows = runsSideBySide([run, before])
      .split('\n')
      .filter((l) => l.startsWith('| ') && !l.startsWith('| figure'));
    expect(rows).toHaveLength(goals.length + 1);
    const cells = (l: string | undefined) => (l ?? '').split(' | ');
    const verdictOf = (c: string | undefined) => (c ?? '').split(', ').pop();
    const firstRow = cells(rows[0]);
    expect(firstRow[0]).toBe(`| ${first.name}`);
    expect(verdictOf(firstRow[1])).toBe(first.pass ? '**fail**' : 'pass');
    expect(verdictOf(firstRow[2])).toBe(first.pass ? 'pass' : '**fail**');
    expect(cells(rows[1])[1]).toBe('not measured');
    expect(cells(rows.at(-1))[0]).toBe('| a goal since left out');
    expect(cells(rows.at(-1))[2]).toBe('not measured');
    expect(runsSideBySide([run])).toMatch(/Fewer than two full runs/);
  });

  it('refuse two goals alike but for their numbers, not drop one', () => {
    const run = latestFullRun();
    if (!run) throw new Error('no full run in bench/results');
    const goal = run.figures.find((f) => f.goal !== undefined);
    if (!goal) throw new Error('no goal');
    const twin = { ...run, figures: [...run.figures, { ...goal, name: goal.name.replace(/\d+/g, '9') }] };
    expect(() => runsSideBySide([twin, run])).toThrow(/named alike/);
  });
});
