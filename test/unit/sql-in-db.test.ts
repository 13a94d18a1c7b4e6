import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// Every SQL statement of pixflow's product code lives in db/, as a named, typed function: the
// rest of the tree calls those functions and writes no SQL of its own. The tests, the bench and
// the scripts may. Only string and template literals count: prose in a comment may say SELECT.

const ROOT = path.resolve(__dirname, '../..');

/** Where SQL may be written. */
const SQL_HOMES = [/^db\//, /^test\//, /^bench\//, /^scripts\//];

const STATEMENT = /\b(SELECT|INSERT INTO|UPDATE [a-z_]+ SET|DELETE FROM)\b/g;

/** A piece of a string or template literal: its text as written, and where it starts. */
interface Literal {
  text: string;
  start: number;
}

/** Keywords after which a `/` starts a regular expression, not a division. */
const BEFORE_REGEX = new Set([
  'return',
  'typeof',
  'instanceof',
  'case',
  'do',
  'else',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'yield',
  'await',
]);

/**
 * The string and template literals of a TypeScript source, comments and regular expressions left
 * out. A template's `${...}` is code again (its own literals are found); the literal's pieces
 * around it are each a literal.
 */
function literalsOf(source: string): Literal[] {
  const literals: Literal[] = [];
  // One entry per open `${`: the brace depth inside it, to know which `}` ends it.
  const templates: number[] = [];
  let i = 0;
  // The last token that was not a comment or blank: decides whether `/` opens a regex.
  let last = '';
  const readTemplatePiece = () => {
    // At the character after the opening backtick or the `}` closing a substitution.
    const start = i;
    while (i < source.length) {
      const c = source[i];
      if (c === '\\') i += 2;
      else if (c === '`') {
        literals.push({ text: source.slice(start, i), start });
        i++;
        last = '`';
        return;
      } else if (c === '$' && source[i + 1] === '{') {
        literals.push({ text: source.slice(start, i), start });
        i += 2;
        templates.push(0);
        last = '{';
        return;
      } else i++;
    }
  };
  while (i < source.length) {
    const c = source[i] as string;
    const next = source[i + 1];
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i);
      i = end === -1 ? source.length : end;
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2);
      i = end === -1 ? source.length : end + 2;
    } else if (c === "'" || c === '"') {
      const start = ++i;
      while (i < source.length && source[i] !== c && source[i] !== '\n') i += source[i] === '\\' ? 2 : 1;
      literals.push({ text: source.slice(start, i), start });
      i++;
      last = c;
    } else if (c === '`') {
      i++;
      readTemplatePiece();
    } else if (c === '/') {
      const regex = last === '' || /^[(,=:[!&|?{};+\-*%<>~^]$/.test(last) || BEFORE_REGEX.has(last);
      i++;
      if (regex) {
        let inClass = false;
        while (i < source.length && source[i] !== '\n') {
          const r = source[i];
          if (r === '\\') i++;
          else if (r === '[') inClass = true;
          else if (r === ']') inClass = false;
          else if (r === '/' && !inClass) break;
          i++;
        }
        i++;
        last = ')';
      } else last = '/';
    } else if (c === '{') {
      const depth = templates.pop();
      if (depth !== undefined) templates.push(depth + 1);
      last = c;
      i++;
    } else if (c === '}') {
      i++;
      const depth = templates.pop();
      if (depth === 0) readTemplatePiece();
      else {
        if (depth !== undefined) templates.push(depth - 1);
        last = c;
      }
    } else if (/[A-Za-z0-9_$]/.test(c)) {
      const start = i;
      while (i < source.length && /[A-Za-z0-9_$]/.test(source[i] as string)) i++;
      last = source.slice(start, i);
    } else {
      if (!/\s/.test(c)) last = c;
      i++;
    }
  }
  return literals;
}

/** Where a source writes a SQL statement in a literal: `line: statement word`, by line. */
function sqlStatementsIn(source: string): string[] {
  const found: string[] = [];
  for (const { text, start } of literalsOf(source)) {
    for (const m of text.matchAll(STATEMENT)) {
      const line = source.slice(0, start + (m.index ?? 0)).split('\n').length;
      found.push(`${line}: ${m[0]}`);
    }
  }
  return found;
}

function productSources(): string[] {
  return execFileSync('git', ['ls-files', '-z', '--', '*.ts', '*.mts', '*.cts'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((f) => f !== '' && !f.endsWith('.d.ts') && !SQL_HOMES.some((home) => home.test(f)));
}

describe('SQL statements', () => {
  it('are written only in db/ (besides tests, bench and scripts)', () => {
    const files = productSources();
    // The listing itself must find the product: an empty one would prove nothing.
    expect(files).toContain('activities/flows.ts');
    const found: string[] = [];
    for (const file of files) {
      let source: string;
      try {
        source = readFileSync(path.join(ROOT, file), 'utf8');
      } catch {
        continue; // tracked, deleted in the work tree
      }
      for (const hit of sqlStatementsIn(source)) found.push(`${file}:${hit}`);
    }
    expect(found, 'move each into a named function of a db/ module').toEqual([]);
  });

  it('are found in string and template literals, by line, and not in comments or regexes', () => {
    const source = [
      '// SELECT in a comment is prose',
      "const a = pool.query('SELECT 1');",
      '/* INSERT INTO t is prose too */ const re = /["`]/g;',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template in the sample source
      'const b = `WITH x AS (${f(`inner`)})',
      '  UPDATE flows SET status = $1`;',
      'const c = "DELETE FROM t", d = x / 2 / 3;',
      // biome-ignore lint/suspicious/noTemplateCurlyInString: a template in the sample source
      'const e = `${"INSERT INTO t"}`;',
      "const f = 'no statement: select here, UPDATE of a SET';",
    ].join('\n');
    expect(sqlStatementsIn(source)).toEqual([
      '2: SELECT',
      '5: UPDATE flows SET',
      '6: DELETE FROM',
      '7: INSERT INTO',
    ]);
  });
});
