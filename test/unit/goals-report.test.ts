import { describe, expect, it } from 'vitest';
import { goalsAreCurrent, latestFullRun, performanceGoals, readmeHeadlines } from '../../bench/goals-report';

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
});
