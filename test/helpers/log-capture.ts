/** The JSON access-log line of one request id among captured pino lines. */
export function observabilityLogLine(
  lines: string[],
  requestId: string,
): Record<string, unknown> | undefined {
  return lines
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.requestId === requestId && l.msg === 'request');
}
