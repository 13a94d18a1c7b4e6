import { setTimeout as sleep } from 'node:timers/promises';
import {
  DefaultLogger,
  type LogEntry,
  type LogLevel,
  type LogMetadata,
  LogTimestamp,
  Runtime,
} from '@temporalio/worker';

// The Temporal SDK's warnings in tests (its worker's and, forwarded, its core's) go through this
// logger. A warning a test causes on purpose is declared by that test and collected for it to
// assert; any other one is printed as the SDK would print it and fails the test during which it
// surfaced (test/setup-runtime.ts), so a passing run is quiet and a real warning stands out.

export interface SdkLogEntry {
  level: LogLevel;
  message: string;
  meta: LogMetadata;
}

interface Expectation {
  matches(entry: SdkLogEntry): boolean;
  seen: SdkLogEntry[];
}

const expectations: Expectation[] = [];
let unexpected: SdkLogEntry[] = [];
const printer = new DefaultLogger('WARN');

function receive({ level, message, meta, timestampNanos }: LogEntry): void {
  const entry = { level, message, meta: meta ?? {} };
  const expected = expectations.find((x) => x.matches(entry));
  if (expected) {
    expected.seen.push(entry);
    return;
  }
  unexpected.push(entry);
  printer.log(level, message, { ...meta, [LogTimestamp]: timestampNanos });
}

/** The Runtime's logger in tests: warnings and errors only. */
export const testSdkLogger = new DefaultLogger('WARN', receive);

/** Hands what the Runtime has buffered (it holds entries ~100 ms to order them) to the logger now. */
export function flushSdkLogs(): void {
  const logger = Runtime.instance().logger as { flush?: () => void };
  logger.flush?.();
}

/** Core pushes its entries to the Runtime every few milliseconds: wait them out, then flush. */
export async function settleSdkLogs(): Promise<void> {
  await sleep(50);
  flushSdkLogs();
}

/**
 * Declares an SDK log entry that the calling test file causes on purpose, from now to the end of
 * the file: such entries are collected instead of printed. Returns the ones collected so far.
 */
export function expectSdkLog(matches: (entry: SdkLogEntry) => boolean): () => SdkLogEntry[] {
  const expectation: Expectation = { matches, seen: [] };
  expectations.push(expectation);
  return () => {
    flushSdkLogs();
    return [...expectation.seen];
  };
}

/** An activity failure a test provokes: the worker logs each failed attempt as a warning. */
export function expectActivityFailure(want: {
  workflowId: string;
  activityType: string;
  error: RegExp;
}): () => SdkLogEntry[] {
  return expectSdkLog(
    ({ message, meta }) =>
      message === 'Activity failed' &&
      meta.workflowId === want.workflowId &&
      meta.activityType === want.activityType &&
      meta.error instanceof Error &&
      want.error.test(meta.error.message),
  );
}

/** The entries nobody declared since the last call (they were printed when they came). */
export function takeUnexpectedSdkLogs(): SdkLogEntry[] {
  const taken = unexpected;
  unexpected = [];
  return taken;
}

/** Fails with a summary of the undeclared warnings, if there were any. */
export function assertNoUnexpectedSdkLogs(when: string): void {
  const taken = takeUnexpectedSdkLogs();
  if (taken.length === 0) return;
  const list = taken.map((e) => `  [${e.level}] ${e.message}`).join('\n');
  throw new Error(
    `the Temporal SDK logged ${taken.length} warning(s) ${when} that no test declared (printed above):\n${list}`,
  );
}
