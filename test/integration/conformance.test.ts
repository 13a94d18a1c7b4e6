import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { OPEN_POINT_IDS } from '../../connectors/identity-payments/open-points';
import { testDocumentFor } from '../../sandbox/test-documents';
import { type SandboxStateView, sandboxState, startProviderSandbox } from '../contract/support';

// `npm run conformance`, run as an operator runs it, against the sandbox in its default dialect
// (the document's side of every open point), in its other dialect, and with credentials it
// refuses. The sandbox runs in this process, so the command runs as a child that does not block it.

const ROOT = path.resolve(__dirname, '../..');
const NOT_PROBED = ['withdraw.duplicate', 'withdraw.create'];
const PROBED = OPEN_POINT_IDS.filter((id) => !NOT_PROBED.includes(id));
const DOCUMENT = testDocumentFor('regular').cpf;

/** npm as `npm test` ran it, else the one on PATH (test/helpers/npm-script.ts does the same). */
function npm(args: string[]): [string, string[]] {
  const cli = process.env.npm_execpath;
  return cli && /npm-cli\.js$/.test(cli) ? [process.execPath, [cli, ...args]] : ['npm', args];
}

interface Run {
  code: number;
  out: string;
  err: string;
}

function conformance(args: string[], env: Record<string, string>): Promise<Run> {
  const [command, npmArgs] = npm(['run', '--silent', 'conformance', '--', ...args]);
  // Only what the command needs: no PROVIDER_* of the test run's own leaks in.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('PROVIDER_')));
  return new Promise((resolve) => {
    execFile(
      command,
      npmArgs,
      {
        cwd: ROOT,
        env: {
          ...base,
          ...env,
          PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
        },
        timeout: 60_000,
      },
      (error, stdout, stderr) => {
        const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
        resolve({ code, out: stdout, err: stderr });
      },
    );
  });
}

const sandboxes: { close: () => Promise<void> }[] = [];
afterAll(async () => {
  await Promise.all(sandboxes.map((s) => s.close()));
});

async function sandbox(options: Parameters<typeof startProviderSandbox>[0] = {}) {
  const s = await startProviderSandbox(options);
  sandboxes.push(s);
  return s;
}

const envFor = (url: string): Record<string, string> => ({
  PROVIDER_BASE_URL: url,
  PROVIDER_AUTH_URL: url,
  PROVIDER_CLIENT_ID: 'sandbox-client',
  PROVIDER_CLIENT_SECRET: 'sandbox-secret',
  PROVIDER_API_KEY: 'sandbox-api-key',
  PROVIDER_MERCHANT: 'sandbox-merchant',
  PROVIDER_TIMEOUT_MS: '5000',
});

/** The side a point's line names, as the operator reads it. */
function sideLine(out: string, id: string): string {
  const line = out.split('\n').find((l) => l.trimStart().startsWith(`${id} `));
  expect(line, `a line for ${id}`).toBeDefined();
  return (line as string).trim().slice(id.length).trim();
}

/** What the run left at the provider: one unpaid R$ 0,01 deposit, no payout. */
function expectOneUnpaidDeposit(state: SandboxStateView) {
  expect(state.deposits).toHaveLength(1);
  // Unpaid, in either dialect's word; R$ 0,01 as a number or its decimal text.
  expect(state.deposits[0]?.status).toMatch(/^(processing|ATIVA)$/);
  expect(String((state.deposits[0] as { value?: unknown } | undefined)?.value)).toBe('0.01');
  expect(state.withdrawals).toEqual([]);
  expect(state.counters.payouts).toEqual({});
}

interface Passed {
  method: string;
  path: string;
  status: number;
  body: string;
  contentType: string;
}

/**
 * The sandbox behind a proxy that changes some of its answers, as a provider that writes what
 * pixflow cannot read would: `rewrite` gets each answer and returns it, or another one.
 */
async function rewritingProxy(target: string, rewrite: (answer: Passed) => Passed) {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(
          (e): e is [string, string] =>
            typeof e[1] === 'string' && !['host', 'content-length'].includes(e[0]),
        ),
      );
      const method = req.method ?? 'GET';
      const answer = await fetch(`${target}${req.url}`, {
        method,
        headers,
        body: method === 'GET' ? undefined : Buffer.concat(chunks),
      });
      const out = rewrite({
        method,
        path: req.url ?? '',
        status: answer.status,
        body: await answer.text(),
        contentType: answer.headers.get('content-type') ?? '',
      });
      res.writeHead(out.status, { 'content-type': out.contentType });
      res.end(out.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  sandboxes.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('npm run conformance', () => {
  it('against the default dialect: the document side of every probed point, exit 0', async () => {
    const s = await sandbox();
    const run = await conformance([], envFor(s.url));
    expect(run.code, run.out + run.err).toBe(0);
    for (const id of PROBED) expect(sideLine(run.out, id), id).toMatch(/^doc\b/);
    for (const id of NOT_PROBED) expect(sideLine(run.out, id)).toMatch(/^not probed: would send a payout/);
    // The bare token for KYC, Bearer for inquiries: no one form for every endpoint.
    expect(run.out).toMatch(/^PROVIDER_AUTH_HEADER=auto$/m);
    expect(run.out).toMatch(/^PROVIDER_RECEIPT_FORMAT=json$/m);
    expect(run.out).toMatch(/^PROVIDER_LIVENESS_ID_FIELD=correlation_id$/m);
    expect(run.out).not.toMatch(/^\s*FAIL/m);
    expect(run.out.trimEnd().split('\n').at(-1)).toMatch(/^verdict: READY/);
    // No secret and no whole CPF on the screen.
    for (const secret of ['sandbox-secret', 'sandbox-api-key', DOCUMENT])
      expect(run.out).not.toContain(secret);
    const state = await sandboxState(s.url);
    expectOneUnpaidDeposit(state);
  });

  it('against the other dialect, from an env file: the other side of every probed point, exit 0', async () => {
    const s = await sandbox({ dialect: { default: 'other', points: {} } });
    const dir = mkdtempSync(path.join(tmpdir(), 'conformance-'));
    const file = path.join(dir, 'provider.env');
    writeFileSync(
      file,
      `${Object.entries(envFor(s.url))
        .map(([k, v]) => `${k}=${v}`)
        .join('\n')}\n`,
    );
    // The file is the provider tested, whatever the environment says.
    const run = await conformance(['--env-file', file], { PROVIDER_BASE_URL: 'http://127.0.0.1:9' });
    expect(run.code, run.out + run.err).toBe(0);
    for (const id of PROBED) expect(sideLine(run.out, id), id).toMatch(/^other\b/);
    expect(run.out).toMatch(/^PROVIDER_AUTH_HEADER=bearer$/m);
    expect(run.out).toMatch(/^PROVIDER_RECEIPT_FORMAT=form$/m);
    expect(run.out).toMatch(/^PROVIDER_LIVENESS_ID_FIELD=correlationId$/m);
    expect(run.out.trimEnd().split('\n').at(-1)).toMatch(/^verdict: READY/);
    expectOneUnpaidDeposit(await sandboxState(s.url));
  });

  it('with credentials the provider refuses: exit non-zero, naming the token', async () => {
    const s = await sandbox({ clientSecret: 'the-provider-s-own-secret' });
    const run = await conformance([], envFor(s.url));
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/^\s*FAIL\s+token: the token request was refused or unreadable: 401/m);
    expect(sideLine(run.out, 'token.expires_in')).toBe('not probed: no token was issued');
    expect(sideLine(run.out, 'kyc.status')).toBe('not probed: no token was issued');
    expect(run.out.trimEnd().split('\n').at(-1)).toMatch(/^verdict: NOT READY: .*\btoken\b/);
  });

  it('against a mixed dialect: each point judged on its own', async () => {
    const mixed = ['auth.header', 'inquiry.status', 'receipt.content-type'] as const;
    const s = await sandbox({
      dialect: { default: 'doc', points: Object.fromEntries(mixed.map((id) => [id, 'other' as const])) },
    });
    const run = await conformance([], envFor(s.url));
    expect(run.code, run.out + run.err).toBe(0);
    for (const id of PROBED) {
      expect(sideLine(run.out, id), id).toMatch(
        (mixed as readonly string[]).includes(id) ? /^other\b/ : /^doc\b/,
      );
    }
    expect(run.out).toMatch(/^PROVIDER_AUTH_HEADER=bearer$/m);
    expect(run.out).toMatch(/^PROVIDER_RECEIPT_FORMAT=form$/m);

    // Settings already given that this provider refuses would stop a flow.
    const given = await conformance([], {
      ...envFor(s.url),
      PROVIDER_AUTH_HEADER: 'bare',
      PROVIDER_RECEIPT_FORMAT: 'json',
      PROVIDER_LIVENESS_ID_FIELD: 'correlationId',
    });
    expect(given.code).toBe(1);
    expect(given.out).toMatch(
      /^\s*FAIL\s+PROVIDER_AUTH_HEADER: PROVIDER_AUTH_HEADER=bare, as set, would be refused/m,
    );
    expect(given.out).toMatch(/^\s*FAIL\s+PROVIDER_RECEIPT_FORMAT: PROVIDER_RECEIPT_FORMAT=json, as set/m);
    // The mixed dialect takes correlation_id: the other spelling, as set, would be refused.
    expect(given.out).toMatch(
      /^\s*FAIL\s+PROVIDER_LIVENESS_ID_FIELD: PROVIDER_LIVENESS_ID_FIELD=correlationId, as set/m,
    );
  });

  it('with an API key the provider refuses: exit non-zero, naming the deposit and the receipt', async () => {
    const s = await sandbox({ apiKey: 'the-provider-s-own-key' });
    const run = await conformance([], envFor(s.url));
    expect(run.code).toBe(1);
    expect(run.out).toMatch(/^\s*FAIL\s+deposit create: a R\$ 0,01 deposit was refused or unreadable: 401/m);
    expect(run.out).toMatch(/^\s*FAIL\s+receipt: /m);
    expect(sideLine(run.out, 'inquiry.status')).toBe('not probed: no deposit was created');
    // What the token opens still ran.
    expect(sideLine(run.out, 'auth.header')).toMatch(/^doc\b/);
    expect(run.out.trimEnd().split('\n').at(-1)).toMatch(/^verdict: NOT READY: .*deposit create.*receipt/);
    expect((await sandboxState(s.url)).deposits).toEqual([]);
  });

  it('answers pixflow cannot read: exit non-zero, naming each; a word in another case is neither side', async () => {
    const s = await sandbox();
    const json = (a: Passed, body: unknown): Passed => ({ ...a, body: JSON.stringify(body) });
    const url = await rewritingProxy(s.url, (a) => {
      const body = a.contentType.includes('json') ? (JSON.parse(a.body) as Record<string, unknown>) : {};
      if (a.path.startsWith('/kyc/') && a.status === 200) return json(a, { ...body, status: 'Regular' });
      // The created deposit's inquiry (the unknown txid's stays a 404).
      if (a.path.startsWith('/dataconnector/') && a.status === 200)
        return json(a, { ...body, status: 'EM_ANALISE_INTERNA' });
      if (a.path === '/v2/deposit/create' && a.status === 400)
        return { ...a, contentType: 'text/html', body: '<html><body>Bad Request</body></html>' };
      return a;
    });
    const run = await conformance([], envFor(url));
    expect(run.code, run.out + run.err).toBe(1);
    expect(sideLine(run.out, 'kyc.status')).toBe('neither: the test document\'s status is "Regular"');
    expect(run.out).toMatch(/^\s*ok\s+KYC: /m);
    expect(sideLine(run.out, 'inquiry.status')).toMatch(
      /^neither: a deposit nobody paid shows "EM_ANALISE_INTERNA"/,
    );
    expect(run.out).toMatch(
      /^\s*FAIL\s+inquiry status: status "EM_ANALISE_INTERNA" is not a word pixflow understands/m,
    );
    expect(run.out).toMatch(
      /^\s*FAIL\s+error bodies: a deposit with an invalid body: 400 \(not JSON\) <html>/m,
    );
    expect(run.out.trimEnd().split('\n').at(-1)).toBe(
      'verdict: NOT READY: these would stop flows: inquiry status; error bodies',
    );
  });

  it('--json: one JSON document a machine reads, the same findings', async () => {
    const s = await sandbox();
    const run = await conformance(['--json', '--kyc-document', DOCUMENT], envFor(s.url));
    expect(run.code, run.err).toBe(0);
    const report = JSON.parse(run.out) as {
      ok: boolean;
      verdict: string;
      points: Record<string, { side: string; question: string }>;
      settings: Record<string, string>;
      checks: { name: string; ok: boolean }[];
      depositTxid: string;
    };
    expect(report.ok).toBe(true);
    expect(report.verdict).toMatch(/^READY/);
    expect(Object.keys(report.points)).toEqual(OPEN_POINT_IDS);
    for (const id of PROBED) expect(report.points[id]?.side, id).toBe('doc');
    for (const id of NOT_PROBED) expect(report.points[id]?.side).toBe('not probed');
    expect(report.settings).toEqual({
      PROVIDER_AUTH_HEADER: 'auto',
      PROVIDER_RECEIPT_FORMAT: 'json',
      PROVIDER_LIVENESS_ID_FIELD: 'correlation_id',
    });
    expect(report.checks.every((c) => c.ok)).toBe(true);
    const state = await sandboxState(s.url);
    expect(state.deposits.map((d) => d.txid)).toEqual([report.depositTxid]);
  });

  it('a wrong option or setting: exit 2 naming it, nothing sent', async () => {
    const s = await sandbox();
    const badDocument = await conformance(['--kyc-document', '12345678900'], envFor(s.url));
    expect(badDocument.code).toBe(2);
    expect(badDocument.err).toContain('--kyc-document: has invalid check digits');
    const badUrl = await conformance([], { ...envFor(s.url), PROVIDER_BASE_URL: 'ftp://provider.example' });
    expect(badUrl.code).toBe(2);
    expect(badUrl.err).toContain('PROVIDER_BASE_URL: must be an http:// or https:// URL');
    const badSetting = await conformance([], { ...envFor(s.url), PROVIDER_AUTH_HEADER: 'basic' });
    expect(badSetting.code).toBe(2);
    expect(badSetting.err).toContain('PROVIDER_AUTH_HEADER: ');
    const noFile = await conformance(
      ['--env-file', path.join(tmpdir(), 'no-such-provider.env')],
      envFor(s.url),
    );
    expect(noFile.code).toBe(2);
    expect(noFile.err).toContain('--env-file ');
    expect((await sandboxState(s.url)).counters.tokenRequests).toBe(0);
  });
});
