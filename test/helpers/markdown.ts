import { micromark } from 'micromark';
import { gfm, gfmHtml } from 'micromark-extension-gfm';

// What the Temporal UI shows of a summary or details: the text rendered as GitHub-flavoured
// Markdown. micromark is CommonMark's reference parser for JavaScript; its GFM extension adds
// tables, strikethrough, task lists, footnotes and autolinks.

/** The tags the rendering uses (autolinks aside: they keep their text), and the text shown. */
export function shownMarkdown(markdown: string): { tags: string[]; text: string } {
  const html = micromark(markdown, { extensions: [gfm()], htmlExtensions: [gfmHtml()] });
  const tags = [...new Set([...html.matchAll(/<(\w+)/g)].map((m) => m[1]!))].filter((t) => t !== 'a');
  const text = html
    .replace(/<[^>]*>/g, '')
    .replace(/&(lt|gt|quot|amp);/g, (_m, e: string) => ({ lt: '<', gt: '>', quot: '"', amp: '&' })[e]!)
    .trim();
  return { tags, text };
}
