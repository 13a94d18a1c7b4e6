import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

// The README is the front door and docs/ the manual: every page is reachable from the README, and
// every relative link in them leads to a file, and to a heading of it when it names one.

const ROOT = path.resolve(__dirname, '../..');
const pages = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\- ]/gu, '')
    .replace(/ /g, '-');

function anchorsIn(text: string): Set<string> {
  const prose = text.replace(/^```[\s\S]*?^```$/gm, '');
  const headings = [...prose.matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!));
  const explicit = [...prose.matchAll(/<a id="([^"]+)"><\/a>/g)].map((m) => m[1]!);
  return new Set([...headings, ...explicit]);
}

/** Relative links of a page, outside code blocks: [text](target). */
function linksIn(text: string): string[] {
  const prose = text.replace(/^```[\s\S]*?^```$/gm, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/i.test(t));
}

describe('README and docs/', () => {
  it('every docs page is linked from the README', () => {
    const readmeLinks = new Set(linksIn(read('README.md')).map((t) => t.split('#')[0]));
    for (const page of pages.filter((p) => p !== 'README.md')) expect(readmeLinks, page).toContain(page);
  });

  for (const page of pages) {
    it(`${page}: every relative link leads somewhere`, () => {
      for (const link of linksIn(read(page))) {
        const [file, anchor] = link.split('#') as [string, string | undefined];
        const target = file === '' ? page : path.normalize(path.join(path.dirname(page), file));
        expect(existsSync(path.join(ROOT, target)), `${page} → ${link}`).toBe(true);
        if (anchor && target.endsWith('.md'))
          expect(anchorsIn(read(target)), `${page} → ${link}`).toContain(anchor);
      }
    });
  }
});
