import { defineConfig } from 'vitest/config';

// Files whose subject is a real deadline (an answer within the Temporal deadline, a window or
// a cache bound running out, looks spread over an interval): they run one at a time after the
// others, so no other test file shares the two cores with them.
const deadlineFiles = [
  'test/api/api-keys.test.ts',
  'test/api/failed-auth.test.ts',
  'test/api/temporal-frozen.test.ts',
  'test/integration/reconciliation.test.ts',
  // The registry's pass keeps to a rate, checked against the clock.
  'test/workflows/rescreening.test.ts',
  // A whole stack of processes whose every answer must come within the deadline, with 4 s links.
  'test/e2e/e2e.test.ts',
  // Two builds' workers on the Temporal server on Postgres, each update answered within the API's
  // deadline: beside the other stacks' files it once met a 503 (alone it takes 50 s).
  'test/production/rolling-upgrade.test.ts',
];

// The flows' tests run a second time with the sandbox taking the other side of every point the
// provider's document leaves open (SANDBOX_DIALECT=other, docs/sandbox.md): what pixflow does must
// not hang on the side its sandbox happens to take.
const otherDialectFiles = [
  'test/workflows/deposit.test.ts',
  'test/workflows/withdrawal.test.ts',
  'test/workflows/onboarding.test.ts',
  'test/e2e/e2e.test.ts',
  'test/e2e/docs-tour.test.ts',
];

// Each project's settings; the global setup is the root's alone, so it runs once per run.
const shared = {
  setupFiles: ['test/setup-runtime.ts'],
  pool: 'forks' as const,
  testTimeout: 60_000,
  hookTimeout: 120_000,
  // A focused test (`.only`) fails the run instead of quietly skipping every other test.
  allowOnly: false,
};

export default defineConfig({
  test: {
    // One Postgres and one Temporal dev server per run, shared by every test file of every
    // project (the root's provided values reach them all).
    globalSetup: ['test/global-setup.ts'],
    // Two cores: two files at a time keeps servers responsive.
    maxWorkers: 2,
    allowOnly: false,
    projects: [
      { test: { ...shared, name: 'suite', include: ['test/**/*.test.ts'], exclude: deadlineFiles } },
      {
        test: {
          ...shared,
          name: 'other-dialect',
          include: otherDialectFiles,
          exclude: deadlineFiles,
          env: { SANDBOX_DIALECT: 'other' },
          // After the suite: the same files' two runs never share the servers at once.
          sequence: { groupOrder: 1 },
        },
      },
      // maxWorkers 1: vitest runs these after every other group, one file at a time.
      {
        test: {
          ...shared,
          name: 'deadlines',
          include: deadlineFiles,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      {
        test: {
          ...shared,
          name: 'other-dialect-deadlines',
          include: otherDialectFiles.filter((file) => deadlineFiles.includes(file)),
          env: { SANDBOX_DIALECT: 'other' },
          maxWorkers: 1,
          sequence: { groupOrder: 3 },
        },
      },
    ],
  },
});
