import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// bench/README.md's settings table says what each BENCH_* variable does and its default in a
// full and a quick run: checked here against what the bench's code reads, so neither drifts.

const BENCH = path.resolve(__dirname, '../../bench');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'results' ? [] : sources(p);
    return e.name.endsWith('.ts') ? [readFileSync(p, 'utf8')] : [];
  });
}

const code = sources(BENCH).join('\n');
const readme = readFileSync(path.join(BENCH, 'README.md'), 'utf8');
const num = (s: string) => String(Number(s.replace(/_/g, '')));

/** Each numeric setting the code reads: its defaults in a full and a quick run. */
function defaultsInCode(): Map<string, { full: string; quick: string }> {
  const out = new Map<string, { full: string; quick: string }>();
  for (const m of code.matchAll(
    /envNum\('(BENCH_[A-Z_]+)',\s*(?:QUICK \? ([\d_.]+) : ([\d_.]+)|([\d_.]+))\)/g,
  )) {
    const [, name, quick, full, both] = m;
    out.set(
      name as string,
      both
        ? { full: num(both), quick: num(both) }
        : { full: num(full as string), quick: num(quick as string) },
    );
  }
  return out;
}

/** The README's rows: variable, full default, quick default. */
function rowsInReadme(): Map<string, { full: string; quick: string }> {
  const out = new Map<string, { full: string; quick: string }>();
  for (const m of readme.matchAll(/^\| `(BENCH_[A-Z_]+)` \|([^|]*)\|([^|]*)\|/gm)) {
    const [, name, full, quick] = m;
    out.set(name as string, { full: (full as string).trim(), quick: (quick as string).trim() });
  }
  return out;
}

describe('bench settings table', () => {
  const inCode = defaultsInCode();
  const inReadme = rowsInReadme();

  it('finds the settings it checks', () => {
    expect(inCode.size).toBeGreaterThanOrEqual(15);
    expect(inReadme.size).toBeGreaterThanOrEqual(15);
  });

  it("gives every numeric setting the code reads with the code's defaults", () => {
    for (const [name, defaults] of inCode) {
      const row = inReadme.get(name);
      expect(row, `${name} is missing from bench/README.md`).toBeDefined();
      const quick = row?.quick === '' ? row.full : row?.quick;
      expect({ name, full: row?.full, quick }).toEqual({ name, ...defaults });
    }
  });

  it('lists only settings the code reads, with the production arguments as the code has them', () => {
    for (const name of inReadme.keys()) {
      expect(code.includes(`'${name}'`) || code.includes(`process.env.${name}`), name).toBe(true);
    }
    const args = /process\.env\.BENCH_PRODUCTION_ARGS \?\? '([^']+)'/.exec(code)?.[1];
    expect(inReadme.get('BENCH_PRODUCTION_ARGS')?.full).toBe(`\`${args}\``);
  });
});
