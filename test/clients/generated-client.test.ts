import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, expect, it } from 'vitest';
import { OPENAPI_FILE, openApiText } from '../../scripts/write-openapi';

// The committed document and the client generated from it are what `npm run clients:generate`
// makes from the code now: a route changed without regenerating fails here, naming the script.

const CLIENT = path.resolve(__dirname, '../../clients/typescript');
const GENERATED = path.join(CLIENT, 'src/generated/schema.ts');
const REGENERATE = 'stale: run `npm run clients:generate` and commit what it writes';
const scratch = mkdtempSync(path.join(tmpdir(), 'pixflow-client-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The generator's command line, exactly as the client package's `generate` script runs it. */
function generateCommand(output: string): { bin: string; args: string[] } {
  const pkg = JSON.parse(readFileSync(path.join(CLIENT, 'package.json'), 'utf8')) as {
    scripts: { generate: string };
  };
  const [name, ...args] = pkg.scripts.generate.split(' ');
  expect(name).toBe('openapi-typescript');
  const at = args.indexOf('--output');
  args[at + 1] = output;
  // Installed in the client package's own node_modules: it needs TypeScript 5's compiler API.
  const manifest = require.resolve('openapi-typescript/package.json', { paths: [CLIENT] });
  const { bin } = JSON.parse(readFileSync(manifest, 'utf8')) as { bin: Record<string, string> };
  return { bin: path.resolve(path.dirname(manifest), bin['openapi-typescript'] as string), args };
}

it('clients/openapi.json is the document the API serves', () => {
  expect(readFileSync(OPENAPI_FILE, 'utf8') === openApiText(), REGENERATE).toBe(true);
});

it('the generated client is what the generator makes of clients/openapi.json', async () => {
  const output = path.join(scratch, 'schema.ts');
  const { bin, args } = generateCommand(output);
  await promisify(execFile)(process.execPath, [bin, ...args], { cwd: CLIENT });
  expect(readFileSync(GENERATED, 'utf8') === readFileSync(output, 'utf8'), REGENERATE).toBe(true);
}, 60_000);
