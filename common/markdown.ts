// Text for the Temporal UI's summaries and details, which it renders as Markdown (GitHub
// flavoured): a value shown there must read as itself. A masked CPF, ***.456.789-**, would
// otherwise turn bold, a reason code like payee_not_owner italic. Pure: workflows use it too.

/** Marks anywhere in a line; `{` and `}` too, as the UI fills `{workflowId}`-style placeholders. */
const INLINE = /[\\`*_~[\]{}<>|&]/g;
/** Marks only at a line's start: heading, quote, list item, setext underline, numbered item. */
const LINE_START = /^([ \t]*)([#>+=-]|\d+(?=[.)]))/gm;

/** `text` escaped so that Markdown shows it as it is, with as few backslashes as it needs. */
export function escapeMarkdown(text: string): string {
  return text
    .replace(INLINE, '\\$&')
    .replace(LINE_START, (_m, indent: string, mark: string) =>
      /^\d/.test(mark) ? `${indent}${mark}\\` : `${indent}\\${mark}`,
    );
}
