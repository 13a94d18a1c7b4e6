/**
 * HTML-escapes text for element content and quoted attribute values. The backtick too: old browsers
 * treated it as an attribute quote.
 */
export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(
    /[&<>"'`]/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;' })[c]!,
  );
}
