import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser';
import { type ApiEnv, startApiEnv } from './support';

// docs/api.md's route table is what callers read first: it must say what /openapi.json says (and
// that document is generated from the schemas the routes validate and answer with).

interface Row {
  routes: { method: string; path: string }[];
  statuses: string[];
  line: string;
}

/** The rows of the table in docs/api.md's "The API" section. */
function documentedRoutes(): Row[] {
  const page = readFileSync(path.join(__dirname, '../../docs/api.md'), 'utf8');
  const section = page.split(/^## /m).find((s) => s.startsWith('The API\n'));
  if (!section) throw new Error('docs/api.md has no "The API" section');
  const rows: Row[] = [];
  for (const line of section.split('\n')) {
    const cells = /^\| (`[^|]+`) \| (.+) \|$/.exec(line);
    if (!cells?.[1] || !cells[2]) continue;
    const routes = [...cells[1].matchAll(/`(GET|POST|PUT|PATCH|DELETE) ([^`?\s]+)[^`]*`/g)].map((m) => ({
      method: String(m[1]).toLowerCase(),
      // Express's `:name` is OpenAPI's `{name}`.
      path: String(m[2]).replace(/:(\w+)/g, '{$1}'),
    }));
    const statuses = [...cells[2].matchAll(/\b([1-5]\d\d)\b/g)].map((m) => String(m[1]));
    rows.push({ routes, statuses, line });
  }
  return rows;
}

interface Doc {
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
}

let e: ApiEnv;
let doc: Doc;

beforeAll(async () => {
  e = await startApiEnv();
  doc = (await (await fetch(`${e.url}/openapi.json`)).json()) as Doc;
});
afterAll(async () => {
  await e?.close();
});

const key = (r: { method: string; path: string }) => `${r.method.toUpperCase()} ${r.path}`;

describe("docs/api.md's route table and /openapi.json", () => {
  it('list the same routes with the same methods', () => {
    const rows = documentedRoutes();
    for (const row of rows) expect(row.routes.length, row.line).toBeGreaterThan(0);
    const inReadme = rows.flatMap((r) => r.routes.map(key)).sort();
    const inDoc = Object.entries(doc.paths)
      .flatMap(([p, ops]) => Object.keys(ops).map((method) => key({ method, path: p })))
      .sort();
    expect(inDoc.length).toBeGreaterThan(0);
    expect(inReadme).toEqual(inDoc);
  });

  it('every status code docs/api.md names for a route is one the document gives it', () => {
    const rows = documentedRoutes();
    expect(rows.some((r) => r.statuses.length > 0)).toBe(true);
    for (const row of rows) {
      expect(row.statuses.length, `${row.line}: names no status`).toBeGreaterThan(0);
      for (const route of row.routes) {
        const documented = Object.keys(doc.paths[route.path]?.[route.method]?.responses ?? {});
        for (const status of row.statuses) expect(documented, `${key(route)} ${status}`).toContain(status);
      }
    }
  });
});

describe('the API reference at /docs', () => {
  it('shows the key placeholder as text in Chromium: Authorization: Bearer <api key>', async () => {
    // Scalar renders descriptions as CommonMark, where a bare <api key> is an HTML tag it drops.
    const browser = await launchChromium();
    try {
      const page = await browser.newPage();
      await page.goto(`${e.url}/docs`);
      const placeholder = page.getByText('Authorization: Bearer <api key>').first();
      await placeholder.waitFor({ timeout: 30_000 });
      expect(await placeholder.textContent()).toContain('Authorization: Bearer <api key>');
      expect(await page.locator('body').textContent()).not.toMatch(/Bearer \./);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
