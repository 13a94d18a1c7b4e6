import { Runtime } from '@temporalio/worker';
import { describe, expect, it, vi } from 'vitest';
import { assertNoConsoleWarnings, takeConsoleWarnings } from '../helpers/console-guard';
import {
  assertNoUnexpectedSdkLogs,
  expectSdkLog,
  flushSdkLogs,
  takeUnexpectedSdkLogs,
} from '../helpers/sdk-log';

// The Runtime logger every test process installs (test/setup-runtime.ts): a warning a test
// declares is collected for it, any other one is printed and fails the test.

describe('SDK warnings in tests', () => {
  it('a declared warning is collected, not printed; an undeclared one is printed and counted', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    let seen: ReturnType<typeof expectSdkLog>;
    let printed: string;
    try {
      seen = expectSdkLog((e) => e.message === 'a warning this test causes');
      Runtime.instance().logger.warn('a warning this test causes', { taskQueue: 'q' });
      Runtime.instance().logger.warn('a warning nobody expects');
      Runtime.instance().logger.info('below the threshold');
      flushSdkLogs();
      printed = stderr.mock.calls.map(([chunk]) => String(chunk)).join('');
    } finally {
      stderr.mockRestore();
    }
    expect(seen().map((e) => [e.message, e.meta.taskQueue])).toEqual([['a warning this test causes', 'q']]);
    expect(printed).toContain('[WARN] a warning nobody expects');
    expect(printed).not.toContain('a warning this test causes');
    expect(printed).not.toContain('below the threshold');
    expect(takeUnexpectedSdkLogs().map((e) => e.message)).toEqual(['a warning nobody expects']);
  });

  it('an undeclared warning fails the test it surfaced in', () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      Runtime.instance().logger.error('something broke');
      flushSdkLogs();
    } finally {
      stderr.mockRestore();
    }
    expect(() => assertNoUnexpectedSdkLogs('during this test')).toThrow(
      /logged 1 warning\(s\) during this test that no test declared[\s\S]*\[ERROR\] something broke/,
    );
    // Taken by the failed check: the setup's own check after this test finds nothing left.
    expect(takeUnexpectedSdkLogs()).toEqual([]);
  });
});

describe('console warnings in tests', () => {
  it('a console.warn or console.error call is counted against the test', () => {
    vi.mocked(console.error).mockImplementationOnce(() => {});
    vi.mocked(console.warn).mockImplementationOnce(() => {});
    console.error(new Error('a stack nobody expected'));
    console.warn('a warning nobody expected');
    const calls = takeConsoleWarnings();
    expect(calls.map(([first]) => String(first))).toEqual([
      'a warning nobody expected',
      'Error: a stack nobody expected',
    ]);
    expect(() => assertNoConsoleWarnings()).not.toThrow();
    vi.mocked(console.error).mockImplementationOnce(() => {});
    console.error('once more');
    expect(() => assertNoConsoleWarnings()).toThrow(/console.error was called 1 time\(s\) during this test/);
  });
});
