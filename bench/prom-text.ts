// Prometheus's text exposition, as the processes' /metrics serve it (prom-client's, the Temporal
// SDK's and the Temporal server's): read once here for every bench tool.

/** One sample of a Prometheus text exposition. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text exposition (comments and unreadable lines left out). */
export function parseMetrics(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    const m = LINE.exec(line);
    if (!m || line.startsWith('#')) continue;
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL))
      labels[l[1] as string] = (l[2] as string).replace(/\\(.)/g, '$1');
    const value = m[3] === '+Inf' ? Number.POSITIVE_INFINITY : Number(m[3]);
    if (!Number.isNaN(value)) out.push({ name: m[1] as string, labels, value });
  }
  return out;
}

/**
 * The sum of a metric's finite samples over its labels: `name` exactly, or, `prefixed`, also
 * after any prefix prom-client was given (`pixflow_worker_nodejs_heap_size_used_bytes` for
 * `nodejs_heap_size_used_bytes`). NaN when it is absent.
 */
export function sumOf(text: string, name: string, prefixed = false): number {
  const values = parseMetrics(text)
    .filter((s) => s.name === name || (prefixed && s.name.endsWith(`_${name}`)))
    .map((s) => s.value)
    .filter(Number.isFinite);
  return values.length ? values.reduce((a, b) => a + b, 0) : Number.NaN;
}
