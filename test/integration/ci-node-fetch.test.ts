import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, truncateSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';

// .ci/run's Node for a lane: from nothing it is fetched from the npm registry into the cache and
// runs; a cached copy is reused as is; a broken one (here a truncated binary) is fetched again.

const ROOT = path.resolve(__dirname, '../..');
const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
const pin = (name: string) => new RegExp(`^${name}=(\\S+)$`, 'm').exec(ci)?.[1] ?? '';
// A version this Node is not of, so .ci/run cannot take the running one.
const version = [pin('NODE_SMOKE'), pin('NODE_SUITE')].find(
  (v) => v.split('.')[0] !== process.versions.node.split('.')[0],
);
const cache = mkdtempSync(path.join(os.tmpdir(), 'pixflow-node-cache-'));

afterAll(() => rmSync(cache, { recursive: true, force: true }));

const nodeBin = () => {
  const r = spawnSync('bash', [path.join(ROOT, '.ci/run'), 'node', String(version)], {
    env: { ...process.env, NODE_CACHE: cache },
    encoding: 'utf8',
    timeout: 240_000,
  });
  expect(r.status, r.stderr).toBe(0);
  const bin = r.stdout.trim();
  expect(bin).toBe(path.join(cache, String(version), 'bin'));
  const v = spawnSync(path.join(bin, 'node'), ['--version'], { encoding: 'utf8' });
  expect(v.stdout.trim()).toBe(`v${version}`);
  return { fetched: r.stderr.includes('fetching Node') };
};

it('fetches the pinned Node from nothing, reuses it, and fetches a broken one again', () => {
  expect(version).toMatch(/^\d+\.\d+\.\d+$/);
  expect(nodeBin().fetched).toBe(true);
  expect(nodeBin().fetched).toBe(false);
  truncateSync(path.join(cache, String(version), 'bin/node'), 4096);
  expect(nodeBin().fetched).toBe(true);
}, 600_000);
