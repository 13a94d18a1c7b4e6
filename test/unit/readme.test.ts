import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { envSchema } from '../../common/config';
import { eventTypes } from '../../contracts/events';
import { testDocumentsMarkdown } from '../../sandbox/test-documents';

const readme = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');

describe('README', () => {
  it('shows the sandbox test documents exactly as the sandbox defines them', () => {
    expect(readme).toContain(testDocumentsMarkdown().trim());
  });

  it('lists every event type pixflow sends in its catalog', () => {
    const catalog = readme.slice(readme.indexOf('## Events'), readme.indexOf('## Choices'));
    for (const type of eventTypes) expect(catalog, type).toContain(`\`${type}\``);
  });

  it('documents every environment variable the config accepts', () => {
    for (const name of Object.keys(envSchema.shape)) {
      if (name === 'NODE_ENV') continue;
      expect(readme, name).toContain(name);
    }
  });
});
