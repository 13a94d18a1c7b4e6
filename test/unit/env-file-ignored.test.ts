import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// .env holds docker compose's secrets (.env.example): it must stay out of git and out of every
// image's build context, while .env.example, the public template, stays in both.

const ROOT = path.resolve(__dirname, '../..');

/** git's own answer: 0 ignored, 1 not ignored. */
const gitIgnores = (file: string) =>
  spawnSync('git', ['check-ignore', '--quiet', '--no-index', file], { cwd: ROOT }).status;

/**
 * Docker's rule for a top-level file: each .dockerignore line a glob against the path from the
 * context's root (a leading slash means the same), a `!` line takes a path back, the last match wins.
 */
function dockerIgnores(file: string): boolean {
  let ignored = false;
  for (const raw of readFileSync(path.join(ROOT, '.dockerignore'), 'utf8').split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const keep = line.startsWith('!');
    const pattern = (keep ? line.slice(1) : line).replace(/^\/+/, '');
    if (path.matchesGlob(file, pattern)) ignored = !keep;
  }
  return ignored;
}

describe('.env and the Temporal certificates stay out of git and out of the image', () => {
  it('git ignores .env and keeps .env.example', () => {
    expect(gitIgnores('.env')).toBe(0);
    expect(gitIgnores('.env.example')).toBe(1);
    // The folder docs/production.md has the operator make: it holds the CA's key.
    expect(gitIgnores('temporal-tls/ca/ca.key')).toBe(0);
  });

  it('the Docker build context leaves .env out and keeps .env.example', () => {
    expect(dockerIgnores('.env')).toBe(true);
    expect(dockerIgnores('.env.example')).toBe(false);
    expect(dockerIgnores('temporal-tls')).toBe(true);
    // The rule itself works: the folders it has always left out are still out.
    expect(dockerIgnores('node_modules')).toBe(true);
  });
});
