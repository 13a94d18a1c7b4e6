import { stripVTControlCharacters } from 'node:util';
import type { Logger } from '@temporalio/common';

// The workflow bundler logs webpack's whole report of a build at info: every module group of the
// bundle, a kilobyte that a JSON log makes one unreadable line at each worker start. The report of
// a clean build goes to debug; one with warnings is a warning, and errors stay errors (the bundler
// logs those at error itself). Its other lines ("Workflow bundle created", the size) pass as they are.

const REPORT = /\bwebpack [\d.]+ compiled\b/;
const WITH_WARNINGS = /\bcompiled with .*\bwarnings?\b/;

/** The logger to give bundleWorkflowCode, over the worker's own. */
export function bundlerLogger(logger: Logger): Logger {
  const route = (message: string) => {
    const text = stripVTControlCharacters(message);
    if (!REPORT.test(text)) return 'info';
    return WITH_WARNINGS.test(text) ? 'warn' : 'debug';
  };
  return {
    log: (level, message, meta) =>
      level === 'INFO' ? logger[route(message)](message, meta) : logger.log(level, message, meta),
    trace: (message, meta) => logger.trace(message, meta),
    debug: (message, meta) => logger.debug(message, meta),
    info: (message, meta) => logger[route(message)](message, meta),
    warn: (message, meta) => logger.warn(message, meta),
    error: (message, meta) => logger.error(message, meta),
  };
}
