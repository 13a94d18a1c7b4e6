import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// docs/versioning.md lists every `patched` branch in the workflows, with the workflows that hold
// it: a patch added, moved or deprecated without the page fails here.

const ROOT = path.resolve(__dirname, '../..');
const WORKFLOWS = path.join(ROOT, 'workflows');

/** A patch's id, where it is given as a string or through a constant of workflows/. */
function patchesInCode(): Map<string, Set<string>> {
  const sources = readdirSync(WORKFLOWS)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => ({ file: f, text: readFileSync(path.join(WORKFLOWS, f), 'utf8') }));
  const constants = new Map<string, string>();
  for (const { text } of sources)
    for (const m of text.matchAll(/export const (\w+) = '([^']+)'/g)) constants.set(m[1]!, m[2]!);
  const found = new Map<string, Set<string>>();
  for (const { file, text } of sources)
    for (const m of text.matchAll(/\bpatched\((?:'([^']+)'|(\w+))\)/g)) {
      const id = m[1] ?? constants.get(m[2]!);
      expect(id, `${file}: patched(${m[2]}) names no constant of workflows/`).toBeDefined();
      const flows = found.get(id!) ?? new Set<string>();
      flows.add(path.basename(file, '.ts'));
      found.set(id!, flows);
    }
  return found;
}

function patchesInDocs(): Map<string, string> {
  const page = readFileSync(path.join(ROOT, 'docs/versioning.md'), 'utf8');
  const start = page.indexOf('| patch | workflow |');
  expect(start, 'the table of patches').toBeGreaterThan(0);
  const table = page.slice(start, page.indexOf('\n\n', start));
  return new Map([...table.matchAll(/^\| `([^`]+)` \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim()]));
}

describe("docs/versioning.md's patches", () => {
  it('are the patches in the workflows, each with the workflows that hold it', () => {
    const code = patchesInCode();
    const docs = patchesInDocs();
    expect([...docs.keys()].sort()).toEqual([...code.keys()].sort());
    for (const [id, files] of code)
      for (const file of files)
        expect(docs.get(id), `${id} in workflows/${file}.ts`).toContain(
          file === 'deposit' ? 'held deposit' : file,
        );
  });
});
