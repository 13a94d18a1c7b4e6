import path from 'node:path';
import { dialectTables } from '../sandbox/dialect';
import { type GeneratedSection, writeSection } from './generated-section';

// `npm run docs:sandbox`: writes the sandbox's dialect tables into docs/sandbox.md, between its
// markers. test/sandbox/dialect-doc.test.ts fails while the page says otherwise.

export const DIALECT_SECTION: GeneratedSection = {
  page: path.resolve(__dirname, '../docs/sandbox.md'),
  begin:
    '<!-- dialect tables: generated from connectors/identity-payments/open-points.ts and sandbox/dialect.ts -->',
  end: '<!-- end of the dialect tables -->',
};

if (require.main === module) writeSection(DIALECT_SECTION, dialectTables());
