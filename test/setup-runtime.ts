import { DefaultLogger, Runtime } from '@temporalio/worker';

// Quiet the SDK in test output: warnings and errors only. Runs once per test process,
// before any worker or native connection exists.
try {
  Runtime.install({ logger: new DefaultLogger('WARN') });
} catch {
  // Already installed in this process.
}
