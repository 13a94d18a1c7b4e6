import { TestWorkflowEnvironment } from '@temporalio/testing';
import { searchAttributeKeys } from '../../common/search-attributes';
import { ensureTemporalCli, ensureTestServer } from '../../scripts/temporal-tools';

// Both servers start from binaries the project built itself (scripts/setup.ts), never from
// @temporalio/testing's default download, which this machine cannot reach.

export function startDevServer(opts: { port?: number; dbFilename?: string } = {}) {
  return TestWorkflowEnvironment.createLocal({
    server: {
      executable: { type: 'existing-path', path: ensureTemporalCli() },
      ip: '127.0.0.1',
      port: opts.port,
      dbFilename: opts.dbFilename,
      ui: false,
      searchAttributes: searchAttributeKeys,
      log: { format: 'pretty', level: 'error' },
    },
  });
}

export function startTimeSkippingServer() {
  return TestWorkflowEnvironment.createTimeSkipping({
    server: { executable: { type: 'existing-path', path: ensureTestServer() } },
  });
}
