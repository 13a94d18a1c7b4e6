import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SCHEMATHESIS_BIN, SCHEMATHESIS_VERSION } from '../../scripts/temporal-tools';
import { expectSdkLog } from '../helpers/sdk-log';
import { API_KEY, type ApiEnv, startApiEnv } from './support';

// Schemathesis, run against the API's own /openapi.json, keeps the document and the API from
// drifting apart: every answer must be documented (status, content type, headers, schema), no
// input may cause a 5xx, data the document refuses must be refused and data it admits accepted,
// and a method a path does not take must be 405 with Allow. Bounded to about a minute.

const HOOKS = path.join(__dirname, 'schemathesis_hooks.py');
const CONFIG = path.join(__dirname, 'schemathesis.toml');
const CHECKS = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_headers_conformance',
  'response_schema_conformance',
  'negative_data_rejection',
  'positive_data_acceptance',
  'missing_required_header',
  'unsupported_method',
  'allow_header_conformance',
  'ignored_auth',
];
const MAX_EXAMPLES = Number(process.env.FUZZ_MAX_EXAMPLES ?? 40);

let e: ApiEnv;
let reports: string;

beforeAll(async () => {
  // The limiters are documented (429 on every /v1 operation), but a fuzzer that keeps meeting
  // them (its wrong keys, checking that auth is not ignored, spend the address's budget of failed
  // authentications) would test the limiters instead of the routes.
  e = await startApiEnv({}, { env: { API_RATE_LIMIT_PER_MINUTE: '0', AUTH_FAILURE_LIMIT: '1000000' } });
  // Generated requests the document admits and the provider refuses (a merchant it does not
  // know, a taken transactionId) fail their flow's activity, as they should: the worker logs it.
  expectSdkLog(
    ({ message, meta }) =>
      message === 'Activity failed' &&
      meta.taskQueue === e.taskQueue &&
      meta.error instanceof Error &&
      /^provider [\w-]+: HTTP 4\d\d\b/.test(meta.error.message),
  );
  reports = mkdtempSync(path.join(tmpdir(), 'pixflow-fuzz-'));
});
afterAll(async () => {
  await e?.close();
  if (reports) rmSync(reports, { recursive: true, force: true });
});

function run(cmd: string, args: string[], env: Record<string, string>, cwd: string) {
  return new Promise<{ code: number | null; output: string }>((resolve, reject) => {
    const child = spawn(cmd, args, {
      cwd,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

describe('/openapi.json under schemathesis', () => {
  it('finds no answer off the document, no 5xx, and every method a path refuses is 405', async () => {
    if (!existsSync(SCHEMATHESIS_BIN)) {
      throw new Error(
        `schemathesis ${SCHEMATHESIS_VERSION} is not installed at ${SCHEMATHESIS_BIN}: run \`npm run setup\` ` +
          '(it needs python3 with venv: `apt-get install python3-venv`)',
      );
    }
    const junit = path.join(reports, 'junit.xml');
    const { code, output } = await run(
      SCHEMATHESIS_BIN,
      [
        '--config-file',
        CONFIG,
        'run',
        `${e.url}/openapi.json`,
        '--header',
        `Authorization: Bearer ${API_KEY}`,
        '--checks',
        CHECKS.join(','),
        '--phases',
        'examples,coverage,fuzzing',
        '--max-examples',
        String(MAX_EXAMPLES),
        '--seed',
        // A fixed seed keeps CI's run the same every time; FUZZ_SEED explores others.
        process.env.FUZZ_SEED ?? '20261123',
        // One worker: Python 3.11's ast.parse, which Hypothesis runs to describe strategies, is
        // not thread-safe (SystemError "AST constructor recursion depth mismatch").
        '--workers',
        '1',
        '--request-timeout',
        '20',
        '--report',
        'junit',
        '--report-junit-path',
        junit,
      ],
      { SCHEMATHESIS_HOOKS: HOOKS, NO_COLOR: '1' },
      // Its caches (.schemathesis, .hypothesis) land in the run's folder, not the repository.
      reports,
    );
    expect(code, output).toBe(0);
    // It ran: every operation of the document was tested.
    const xml = readFileSync(junit, 'utf8');
    const tested = xml.match(/<testcase /g)?.length ?? 0;
    expect(tested, output).toBeGreaterThanOrEqual(11);
  }, 240_000);
});
