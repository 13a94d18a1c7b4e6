import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// A focused test (`.only`) or a skipped one quietly leaves the rest of the suite unrun: both the
// lint `npm run lint` runs and the test run itself refuse them.

const root = path.resolve(__dirname, '../..');
const biome = path.join(root, 'node_modules/.bin/biome');

/**
 * `biome lint` on `source` as a test file, with the repository's settings, in a folder of its
 * own (outside the repository, so no other run sees the file; no git there, so no ignore file).
 */
function lint(source: string) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-lint-'));
  try {
    const settings = JSON.parse(readFileSync(path.join(root, 'biome.json'), 'utf8'));
    writeFileSync(path.join(dir, 'biome.json'), JSON.stringify({ ...settings, vcs: { enabled: false } }));
    mkdirSync(path.join(dir, 'test/unit'), { recursive: true });
    writeFileSync(path.join(dir, 'test/unit/focused.test.ts'), source);
    return spawnSync(biome, ['lint', 'test/unit/focused.test.ts'], { cwd: dir, encoding: 'utf8' });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const file = (call: string) =>
  `import { expect, it } from 'vitest';\n\n${call}('adds', () => {\n  expect(1 + 1).toBe(2);\n});\n`;

describe('focused and skipped tests', () => {
  it('fail the lint as errors, while the same test unfocused passes it', () => {
    const plain = lint(file('it'));
    expect(plain.status, `${plain.stdout}${plain.stderr}`).toBe(0);
    // Written as parts, so this file itself holds no focused or skipped call.
    const calls = [
      ['it', 'only'],
      ['describe', 'only'],
      ['it', 'skip'],
    ].map((parts) => parts.join('.'));
    for (const call of calls) {
      const r = lint(file(call));
      expect(r.status, call).not.toBe(0);
      expect(`${r.stdout}${r.stderr}`, call).toMatch(/lint\/suspicious\/no(Focused|Skipped)Tests/);
    }
  });

  it('fail the test run: no project of the suite allows `.only`', async () => {
    // The config is an ES module (.mts), these tests are not: imported, not required.
    const test = (await import('../../vitest.config.mjs')).default.test ?? {};
    expect(test.allowOnly).toBe(false);
    const projects = (test.projects ?? []) as Array<{ test: { name: string; allowOnly?: boolean } }>;
    expect(projects.length).toBeGreaterThan(0);
    for (const p of projects) expect(p.test.allowOnly, p.test.name).toBe(false);
  });
});
