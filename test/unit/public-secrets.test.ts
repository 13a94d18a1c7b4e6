import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  PUBLIC_CODEC_KEY_MATERIAL,
  PUBLIC_POSTGRES_PASSWORDS,
  PUBLIC_SECRET_VALUES,
} from '../../common/public-secrets';

// Production refuses every secret value this repository shows (common/public-secrets.ts). This
// keeps that list whole: it reads every tracked file for values given to a secret variable, or
// to a constant named like one, in the forms the repository uses (env assignments and compose
// defaults, object keys and constants in code, zod defaults, Dockerfile ENV, docs), plus
// webhook URLs' secret segment and literal Bearer tokens, and fails on one the list lacks.

const ROOT = path.resolve(__dirname, '../..');

/** The secret variables, and the names tests and docs keep their values under. */
const SECRET_NAME =
  /^(?:[A-Z0-9]+_)*(?:API_KEYS?|CODEC_KEYS|CODEC_TOKENS?|PII(?:_HASH)?_KEY|WEBHOOK_SECRET|SESSION_SECRET|SECRET)$/;
const CODE = /\.(ts|mts|cts|js|cjs|mjs)$/;

interface Found {
  name: string;
  value: string;
  where: string;
}

/** A string literal starting at `i` (its quote): its text, `${...}` parts kept as written. */
function literalAt(text: string, i: number): string | undefined {
  const quote = text[i];
  if (quote !== "'" && quote !== '"' && quote !== '`') return undefined;
  let out = '';
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j] as string;
    if (c === '\\') {
      out += text[j + 1] ?? '';
      j++;
    } else if (c === quote) return out;
    else if (c === '\n' && quote !== '`') return undefined;
    else out += c;
  }
  return undefined;
}

/** `const NAME = 'literal'` in every file: what an identifier given to a secret stands for. */
function constantsOf(files: Map<string, string>) {
  const all = new Map<string, Set<string>>();
  const byFile = new Map<string, Map<string, string>>();
  for (const [file, text] of files) {
    const own = new Map<string, string>();
    for (const m of text.matchAll(/\b(?:const|let|var)\s+([A-Z][A-Z0-9_]*)\s*=\s*/g)) {
      const value = literalAt(text, (m.index ?? 0) + m[0].length);
      if (value === undefined) continue;
      own.set(m[1] as string, value);
      all.set(m[1] as string, (all.get(m[1] as string) ?? new Set()).add(value));
    }
    byFile.set(file, own);
  }
  // The file's own constant, else every file's of that name (an import).
  return (file: string, name: string): string[] => {
    const own = byFile.get(file)?.get(name);
    return own !== undefined ? [own] : [...(all.get(name) ?? [])];
  };
}

type Resolve = (file: string, name: string) => string[];

/** A constant's values, its own `${CONSTANT}` parts filled in; none when computed. */
const constantValues = (file: string, name: string, resolve: Resolve, depth = 0) =>
  resolve(file, name).flatMap((v) => filled(file, v, resolve, depth) ?? []);

/** A template's `${CONSTANT}` parts filled in; undefined when any part is computed (fresh). */
function filled(file: string, template: string, resolve: Resolve, depth = 0): string[] | undefined {
  let outs = [''];
  for (const part of template.split(/(\$\{[^}]*\})/)) {
    const ref = /^\$\{\s*([A-Z][A-Z0-9_]*)\s*\}$/.exec(part);
    if ((part.startsWith('${') && !ref) || depth > 3) return undefined;
    const values = ref ? constantValues(file, ref[1] as string, resolve, depth + 1) : [part];
    if (!values.length) return undefined;
    outs = outs.flatMap((o) => values.map((v) => o + v));
  }
  return outs;
}

/** What an assignment's right-hand side, at `i`, gives: literal values, or none. */
function valuesAt(file: string, text: string, i: number, resolve: Resolve): string[] {
  const rest = text.slice(i, i + 400);
  const literal = literalAt(text, i);
  // <placeholder> is what the docs and messages show for one's own.
  if (literal !== undefined) return literal.startsWith('<') ? [] : (filled(file, literal, resolve) ?? []);
  // ${NAME:-default} is read wherever it stands (scan), ${NAME:?message} gives none.
  if (rest.startsWith('${')) return [];
  // A zod schema: its .default(...), before the next variable.
  if (/^z\s*\./.test(rest)) {
    const schema = text.slice(i).split(/\n\s*(?:\/\*\*|\/\/|[A-Z][A-Z0-9_]*:)/)[0] ?? '';
    const d = /\.default\(\s*/.exec(schema);
    const value = d ? literalAt(schema, (d.index ?? 0) + d[0].length) : undefined;
    return value === undefined ? [] : (filled(file, value, resolve) ?? []);
  }
  // process.env.X ?? fallback
  const fallback = /^process\.env\.[A-Z0-9_]+\s*(?:\?\?|\|\|)\s*/.exec(rest);
  if (fallback) return valuesAt(file, text, i + fallback[0].length, resolve);
  const ident = /^([A-Z][A-Z0-9_]*)\b/.exec(rest);
  if (ident && CODE.test(file)) return constantValues(file, ident[1] as string, resolve);
  if (CODE.test(file) || /^[$<({[]/.test(rest)) return [];
  // Shell, env, YAML, Dockerfile, docs: a plain word.
  const word = /^[^\s'"`,;)}\]|]+/.exec(rest);
  return word ? [word[0]] : [];
}

function scan(files: Map<string, string>): Found[] {
  const resolve = constantsOf(files);
  const found: Found[] = [];
  for (const [file, text] of files) {
    const lineOf = (i: number) => `${file}:${text.slice(0, i).split('\n').length}`;
    const add = (name: string, values: string[], i: number) => {
      // How to make one (the refusals', the docs', a shell's `$(...)`), or a shortened one
      // (`whsec_...`), not one.
      for (const value of values)
        if (!/openssl rand|\$\(|(\.\.\.|…)$/.test(value)) found.push({ name, value, where: lineOf(i) });
    };
    // NAME=value, NAME = value, NAME: value (not process.env.NAME, ${NAME...}, NAME ==, NAME =>).
    for (const m of text.matchAll(/(?<![\w$.{-])([A-Z][A-Z0-9_]*)\s*(?:=(?![=>])|:(?![:?-]))\s*/g)) {
      const name = m[1] as string;
      if (!SECRET_NAME.test(name)) continue;
      const at = (m.index ?? 0) + m[0].length;
      add(name, valuesAt(file, text, at, resolve), m.index ?? 0);
    }
    for (const m of text.matchAll(/\$\{([A-Z0-9_]+):?-([^}]*)\}/g)) {
      if (SECRET_NAME.test(m[1] as string)) add(m[1] as string, [m[2] as string], m.index ?? 0);
    }
    // The secret in an ingress URL, either provider's (not a part of one: `not-the-${secret}`).
    for (const m of text.matchAll(/\/webhooks\/(?:provider|api-pix)\/([A-Za-z0-9][\w.~-]*)(?=[^\w.~$-]|$)/g))
      add('WEBHOOK_SECRET', [m[1] as string], m.index ?? 0);
    // A header's token, not prose about them.
    for (const m of text.matchAll(
      /(?:['"`]|[Aa]uthorization:\s*)Bearer (?!realm=)([A-Za-z0-9][\w.~+/=-]*)(?=['"`])/g,
    ))
      add('API_KEYS', [m[1] as string], m.index ?? 0);
  }
  return found;
}

/** A Postgres password's names: compose's, the images'. */
const PASSWORD_NAME = /^(?:POSTGRES_PASSWORD|SQL_PASSWORD|POSTGRES_PWD|[A-Z_]*_PG_[A-Z_]*PASSWORD)$/;

/** Postgres passwords the files give: in a URL's user part (constants filled in), or by name. */
function scanPasswords(files: Map<string, string>): Found[] {
  const resolve = constantsOf(files);
  const found: Found[] = [];
  for (const [file, text] of files) {
    const lineOf = (i: number) => `${file}:${text.slice(0, i).split('\n').length}`;
    for (const m of text.matchAll(/postgres(?:ql)?:\/\/[^\s:@/'"`]+:([^\s@'"`]+)@/g)) {
      const written = m[1] as string;
      // A mask (`***`) or compose's required variable is no password.
      if (/^\*+$/.test(written) || /^\$\{[A-Z_]+:\?/.test(written)) continue;
      for (const value of filled(file, written, resolve) ?? [])
        found.push({ name: 'DATABASE_URL', value: decodeURIComponent(value), where: lineOf(m.index ?? 0) });
    }
    for (const m of text.matchAll(/(?<![\w$.{-])([A-Z][A-Z0-9_]*)\s*(?:=(?![=>])|:(?![:?-]))\s*/g)) {
      if (!PASSWORD_NAME.test(m[1] as string)) continue;
      for (const value of valuesAt(file, text, (m.index ?? 0) + m[0].length, resolve))
        found.push({ name: m[1] as string, value, where: lineOf(m.index ?? 0) });
    }
  }
  return found;
}

const publicPasswords = new Set([...PUBLIC_POSTGRES_PASSWORDS, ...PUBLIC_SECRET_VALUES]);

const publicMaterial = new Set(
  PUBLIC_CODEC_KEY_MATERIAL.map((b) => Buffer.from(b, 'base64').toString('hex')),
);

/** The found values the list lacks: whole values, each of a comma list, each codec key's material. */
function missing(found: Found[]): string[] {
  const out: string[] = [];
  for (const f of found) {
    if (f.name.endsWith('CODEC_KEYS')) {
      for (const entry of f.value.split(',')) {
        const key = Buffer.from(entry.slice(entry.indexOf(':') + 1).trim(), 'base64');
        // Not 32 bytes: no key at all, refused as such.
        if (key.length === 32 && !publicMaterial.has(key.toString('hex')))
          out.push(`${f.where} ${f.name} key material ${entry}`);
      }
      continue;
    }
    const parts = /(KEYS|TOKENS)$/.test(f.name) ? f.value.split(',') : [f.value];
    for (const part of parts.map((p) => p.trim()).filter(Boolean)) {
      if (!PUBLIC_SECRET_VALUES.has(part)) out.push(`${f.where} ${f.name}=${part}`);
    }
  }
  return out;
}

function trackedFiles(): Map<string, string> {
  const ls = spawnSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' });
  expect(ls.status, ls.stderr).toBe(0);
  const files = new Map<string, string>();
  for (const file of ls.stdout.split('\0').filter(Boolean)) {
    // This file's samples below are the scan's fixtures.
    if (file === path.relative(ROOT, __filename)) continue;
    if (/\.(png|jpe?g|gif|ico|woff2?|ttf)$/.test(file) || file === 'package-lock.json') continue;
    const buf = readFileSync(path.join(ROOT, file));
    if (buf.includes(0)) continue; // binary
    files.set(file, buf.toString('utf8'));
  }
  return files;
}

describe('the public secret values', () => {
  const files = trackedFiles();

  it('list every value the tracked files give a secret variable', () => {
    const found = scan(files);
    // The scan itself finds the forms it looks for (else an empty scan would pass).
    const seen = new Set(found.map((f) => f.value));
    for (const v of [
      'dev-api-key',
      'dev-webhook-secret-change-me',
      'dev-backoffice-session-secret-change-me',
    ])
      expect(seen, v).toContain(v);
    expect(missing(found)).toEqual([]);
  });

  it('list every Postgres password the tracked files give', () => {
    const found = scanPasswords(files);
    const seen = new Set(found.map((f) => f.value));
    // The embedded Postgres's development one (EMBEDDED_PG_DEV_PASSWORD) and .env.example's are found.
    for (const v of ['pixflow', 'replace-me-postgres-password']) expect(seen, v).toContain(v);
    expect(
      found.filter((f) => !publicPasswords.has(f.value)).map((f) => `${f.where} ${f.name}=${f.value}`),
    ).toEqual([]);
  });

  it('the password scan catches each form a password can be given in', () => {
    const sample = new Map([
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template in the sample file
      ['a.ts', "const PASSWORD = 'p1';\nconst url = `postgresql://u:${PASSWORD}@h:1/db`;"],
      ['b.md', 'DATABASE_URL=postgres://u:p%402@h/db and postgresql://u:***@h/db'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's ${NAME:?message}
      ['c.yml', 'x:\n  POSTGRES_PASSWORD: p3\n  SQL_PASSWORD: ${POSTGRES_PASSWORD:?set it}\n'],
      ['.env', 'POSTGRES_PASSWORD=p4\n'],
    ]);
    expect(
      scanPasswords(sample)
        .map((f) => f.value)
        .sort(),
    ).toEqual(['p1', 'p3', 'p4', 'p@2']);
  });

  it('the scan catches each form a value can be given in', () => {
    // The samples hold ${...} as the files do: compose's syntax and templates', not this file's.
    const sample = new Map([
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template in the sample file
      ['a.ts', "export const WEBHOOK_SECRET = 'w1';\nconst env = { API_KEYS: `${K},k2` };\nconst K = 'k1';"],
      ['b.ts', "  PII_HASH_KEY: z.string()\n    .min(16)\n    .default('p1'),\n  OTHER: z.string(),"],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's ${NAME:-default}
      ['c.yml', 'x:\n  WEBHOOK_SECRET: ${WEBHOOK_SECRET:-w2}\n  API_KEYS: ${API_KEYS:?set it}\n'],
      ['d.md', 'BACKOFFICE_SESSION_SECRET=s1 npm start; curl -H "Authorization: Bearer t1"'],
      ['Dockerfile', 'ENV CODEC_TOKENS=t2\n'],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: templates in the sample file
      ['e.ts', 'fetch(`${url}/webhooks/provider/w3`); const r = { CODEC_KEYS: `a:${fresh()}` };'],
      ['f.ts', "API_KEYS: process.env.API_KEYS ?? 'k3',"],
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template in the sample file
      ['g.ts', "const HOW = { PII_HASH_KEY: `make one with ${HEX}` };\nconst HEX = 'openssl rand -hex 32';"],
    ]);
    const values = scan(sample)
      .map((f) => f.value)
      .sort();
    expect(values).toEqual(['k1,k2', 'k3', 'p1', 's1', 't1', 't2', 'w1', 'w2', 'w3']);
  });
});
