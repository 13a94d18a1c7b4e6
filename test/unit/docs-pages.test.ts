import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { eventTypes } from '../../contracts/events';
import { eligibilityTestCpfsMarkdown } from '../../sandbox/eligibility';
import { payoutAuthorizationTestAmountsMarkdown } from '../../sandbox/payout-authorization';
import { testDocumentsMarkdown } from '../../sandbox/test-documents';

const page = (name: string) => readFileSync(path.resolve(__dirname, '../../docs', name), 'utf8');

describe('the docs', () => {
  it('show the sandbox test documents exactly as the sandbox defines them', () => {
    expect(page('sandbox.md')).toContain(testDocumentsMarkdown().trim());
    expect(page('sandbox.md')).toContain(eligibilityTestCpfsMarkdown().trim());
    expect(page('sandbox.md')).toContain(payoutAuthorizationTestAmountsMarkdown().trim());
  });

  it('list every event type pixflow sends in its catalog', () => {
    const api = page('api.md');
    const catalog = api.slice(api.indexOf('## Events'));
    for (const type of eventTypes) expect(catalog, type).toContain(`\`${type}\``);
  });
});
