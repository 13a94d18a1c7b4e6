import path from 'node:path';
import type { Logger, LogLevel } from '@temporalio/common';
import { bundleWorkflowCode } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { bundlerLogger } from '../../worker/bundle-log';

// What the worker logs as it bundles its workflows: a line that says the bundle was made, not
// webpack's report of every module; a warning when webpack has one.

const FIXTURES = path.resolve(__dirname, '../fixtures');

async function bundleLog(workflowsPath: string) {
  const lines: Array<{ level: LogLevel; message: string }> = [];
  const at =
    (level: LogLevel) =>
    (message: string): void => {
      lines.push({ level, message });
    };
  const worker: Logger = {
    log: (level, message) => at(level)(message),
    trace: at('TRACE'),
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARN'),
    error: at('ERROR'),
  };
  await bundleWorkflowCode({ workflowsPath, logger: bundlerLogger(worker) });
  return lines;
}

describe("the worker's workflow bundling", () => {
  it("logs that the bundle was made, and webpack's report of a clean build only at debug", async () => {
    const lines = await bundleLog(path.join(FIXTURES, 'ping-workflow.ts'));
    const above = lines.filter((l) => l.level !== 'DEBUG' && l.level !== 'TRACE');
    expect(above).toEqual([{ level: 'INFO', message: 'Workflow bundle created' }]);
    const report = lines.find((l) => /webpack [\d.]+ compiled/.test(l.message));
    expect(report?.level).toBe('DEBUG');
  }, 60_000);

  it('logs a build with warnings as a warning', async () => {
    const lines = await bundleLog(path.join(FIXTURES, 'workflow-with-warning.ts'));
    const warned = lines.filter((l) => l.level === 'WARN');
    expect(warned.map((l) => l.message).join('\n')).toMatch(
      /Critical dependency[\s\S]*compiled with 1 warning/,
    );
    expect(lines.filter((l) => l.level === 'INFO').map((l) => l.message)).toEqual([
      'Workflow bundle created',
    ]);
  }, 60_000);
});
