import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// A page's section between two markers, written by a generator (`npm run docs:*`); each has a
// unit test that fails while the page says otherwise.

export interface GeneratedSection {
  /** The page's absolute path. */
  page: string;
  begin: string;
  end: string;
}

/** The page's text with the section's content replaced by `content`. */
export function withSection(text: string, s: GeneratedSection, content: string): string {
  const start = text.indexOf(s.begin);
  const end = text.indexOf(s.end);
  if (start < 0 || end < start) throw new Error(`${s.page} has no markers ${s.begin} … ${s.end}`);
  return `${text.slice(0, start + s.begin.length)}\n${content}\n${text.slice(end)}`;
}

/** Whether the page's section holds `content`. */
export function sectionIsCurrent(s: GeneratedSection, content: string): boolean {
  const text = readFileSync(s.page, 'utf8');
  return withSection(text, s, content) === text;
}

/** Writes `content` into the page's section, and says so. */
export function writeSection(s: GeneratedSection, content: string): void {
  writeFileSync(s.page, withSection(readFileSync(s.page, 'utf8'), s, content));
  process.stdout.write(`wrote ${path.relative(process.cwd(), s.page)}\n`);
}
