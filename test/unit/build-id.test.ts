import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildIdFor, bundleHash } from '../../worker/build-id';

// The worker's build id, from a checkout of its own: the same code gets the same id, other code
// another one, whatever git can or cannot say.

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function checkout(opts: { git: boolean }) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-build-id-'));
  dirs.push(dir);
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'pixflow', version: '1.0.0' }));
  writeFileSync(path.join(dir, 'flow.ts'), 'export const flow = 1;\n');
  if (opts.git) {
    const git = (...args: string[]) =>
      execFileSync('git', ['-C', dir, '-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], {
        encoding: 'utf8',
      }).trim();
    git('init', '-q');
    git('add', '.');
    git('commit', '-q', '-m', 'release');
    return { dir, commit: git('rev-parse', '--short=12', 'HEAD') };
  }
  return { dir, commit: undefined };
}

describe('the build id', () => {
  it('is the version and the commit from a clean checkout, whatever the bundle', () => {
    const { dir, commit } = checkout({ git: true });
    expect(buildIdFor('bundle one', dir)).toBe(`1.0.0+${commit}`);
    expect(buildIdFor('bundle two', dir)).toBe(`1.0.0+${commit}`);
  });

  it('adds a hash of the workflow code when the checkout has changes: the commit alone would not name it', () => {
    const { dir, commit } = checkout({ git: true });
    writeFileSync(path.join(dir, 'flow.ts'), 'export const flow = 2;\n');
    expect(buildIdFor('changed bundle', dir)).toBe(`1.0.0+${commit}.${bundleHash('changed bundle')}`);
    expect(buildIdFor('changed bundle', dir)).not.toBe(buildIdFor('another change', dir));
  });

  it('is the version and a hash of the workflow code without git (the Docker image)', () => {
    const { dir } = checkout({ git: false });
    expect(buildIdFor('bundle', dir)).toBe(`1.0.0+${bundleHash('bundle')}`);
    expect(bundleHash('bundle')).toMatch(/^[0-9a-f]{12}$/);
    expect(bundleHash('bundle')).not.toBe(bundleHash('bundle '));
  });
});
