import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '../api/openapi';

// `npm run openapi:write`: /openapi.json as the API serves it, written to clients/openapi.json
// without starting anything. The clients are generated from this file and `npm run lint:openapi`
// lints it; `--check` fails while the committed file says otherwise.

export const OPENAPI_FILE = path.resolve(__dirname, '../clients/openapi.json');

/** The document as the file holds it. */
export const openApiText = () => `${JSON.stringify(buildOpenApiDocument(), null, 2)}\n`;

if (require.main === module) {
  const relative = path.relative(process.cwd(), OPENAPI_FILE);
  if (process.argv.includes('--check')) {
    if (readFileSync(OPENAPI_FILE, 'utf8') !== openApiText()) {
      process.stderr.write(`${relative} is not the API's document: npm run openapi:write\n`);
      process.exit(1);
    }
  } else {
    writeFileSync(OPENAPI_FILE, openApiText());
    process.stdout.write(`wrote ${relative}\n`);
  }
}
