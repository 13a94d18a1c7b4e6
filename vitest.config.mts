import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One Postgres and one Temporal dev server per run, shared by every test file.
    globalSetup: ['test/global-setup.ts'],
    setupFiles: ['test/setup-runtime.ts'],
    pool: 'forks',
    // Two cores: two files at a time keeps servers responsive.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
