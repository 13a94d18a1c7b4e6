import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';

// The Node versions live in one place, .ci/run: the suite runs on NODE_SUITE, the image builds
// on its major, and the smoke lane runs on NODE_SMOKE, the oldest Node package.json's engines
// allow. None of them can move without the others.

const ROOT = path.resolve(__dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

const ci = read('.ci/run');
const pinned = (name: string) => {
  const version = new RegExp(`^${name}=(\\d+)\\.(\\d+)\\.(\\d+)$`, 'm').exec(ci);
  if (!version) throw new Error(`.ci/run pins no ${name}=<major>.<minor>.<patch>`);
  return { version: version.slice(1).join('.'), major: Number(version[1]) };
};
const suite = pinned('NODE_SUITE');
const smoke = pinned('NODE_SMOKE');

describe('the Node versions CI, the image and engines use', () => {
  it('both stages of the image build on the major the suite runs on', () => {
    const froms = [...read('Dockerfile').matchAll(/^FROM\s+(\S+)/gm)].map((m) => m[1]!);
    expect(froms.length).toBeGreaterThanOrEqual(2);
    for (const image of froms) expect(image).toBe(`node:${suite.major}-bookworm-slim`);
  });

  it("engines starts at the smoke lane's major, below the suite's", () => {
    const pkg = z.object({ engines: z.object({ node: z.string() }) }).parse(JSON.parse(read('package.json')));
    expect(pkg.engines.node).toBe(`>=${smoke.major}`);
    expect(smoke.major).toBeLessThan(suite.major);
  });

  it('CI runs the suite on NODE_SUITE and the smoke tests on NODE_SMOKE, failing on EBADENGINE', () => {
    const suiteLane = ci.indexOf('export PATH="$suite_bin:');
    const smokeLane = ci.indexOf('export PATH="$smoke_bin:');
    expect(ci).toContain('suite_bin=$(node_bin "$NODE_SUITE")');
    expect(ci).toContain('smoke_bin=$(node_bin "$NODE_SMOKE")');
    expect(suiteLane).toBeGreaterThan(0);
    expect(smokeLane).toBeGreaterThan(suiteLane);
    // The README's test command on the suite's Node, the smoke script on the oldest.
    expect(ci.slice(suiteLane, smokeLane)).toMatch(/^npm test$/m);
    expect(ci.slice(smokeLane)).toMatch(/^npm run test:smoke$/m);
    // Every npm install goes through the function that fails on an engine warning.
    expect(ci).toMatch(/grep -q EBADENGINE/);
    expect(ci).not.toMatch(/^\s*npm (ci|install)\b/m);
  });
});
