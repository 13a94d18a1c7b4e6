import { type MockInstance, vi } from 'vitest';

// pixflow itself never writes to console.warn or console.error: in a test, such a call is a
// warning or a stack nobody expected. It still prints (the spies call through), and
// test/setup-runtime.ts fails the test during which it came.

let spies: MockInstance[] = [];

export function watchConsoleWarnings(): void {
  spies = [vi.spyOn(console, 'warn'), vi.spyOn(console, 'error')];
}

/** The console.warn/console.error calls since the last call, as their argument lists. */
export function takeConsoleWarnings(): unknown[][] {
  const calls = spies.flatMap((s) => s.mock.calls);
  for (const s of spies) s.mockClear();
  return calls;
}

export function assertNoConsoleWarnings(): void {
  const calls = takeConsoleWarnings();
  if (calls.length === 0) return;
  throw new Error(
    `console.warn/console.error was called ${calls.length} time(s) during this test (printed above)`,
  );
}
