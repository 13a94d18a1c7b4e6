import { describe, expect, inject, it } from 'vitest';

// The SDK keeps a module cache per workflow: every module the bundle loads is evaluated again
// for each cached workflow. zod and the input schemas there cost each open flow about 1.3 MB
// (the bench's worker RSS with 500 deposits open went from 615 to 1,734 MiB), so the workflows
// and the contracts they import keep to plain definitions and types.
describe('the workflow bundle', () => {
  const code = inject('workflowBundle');

  it('loads the flows and their contracts', () => {
    expect(code).toContain('contracts/deposit.ts');
    expect(code).toContain('workflows/flow-lifecycle.ts');
  });

  it('loads neither zod nor the input schemas', () => {
    expect(code).not.toMatch(/node_modules\/zod\//);
    expect(code).not.toMatch(/contracts\/[a-z-]+-input\.ts/);
    expect(code).not.toContain('provider/schemas.ts');
  });
});
