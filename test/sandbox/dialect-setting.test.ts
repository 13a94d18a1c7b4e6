import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../common/config';
import { OPEN_POINT_IDS } from '../../connectors/identity-payments/open-points';
import { DialectError, dialectOf } from '../../sandbox/dialect';
import { freePort } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';
import { startDialectSandbox } from './support';

// SANDBOX_DIALECT: common/config.ts reads its form (doc, other, point=side,...), the sandbox knows
// which points exist and refuses to start naming one it does not, and sandbox/main.ts passes the
// setting to the sandbox it starts.

const ROOT = path.resolve(__dirname, '../..');
const dialectSetting = (value: string | undefined) => loadConfig({ SANDBOX_DIALECT: value }).SANDBOX_DIALECT;

/** The problem lines loadConfig refuses `value` with. */
function problemsOf(value: string): string[] {
  try {
    loadConfig({ SANDBOX_DIALECT: value });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('SANDBOX_DIALECT', () => {
  it('is doc when unset; doc or other for every point; a list of point=side switches single points', () => {
    expect(dialectSetting(undefined)).toEqual({ default: 'doc', points: {} });
    expect(dialectSetting('')).toEqual({ default: 'doc', points: {} });
    expect(dialectSetting('other')).toEqual({ default: 'other', points: {} });
    expect(dialectSetting('inquiry.status=other, auth.header=other')).toEqual({
      default: 'doc',
      points: { 'inquiry.status': 'other', 'auth.header': 'other' },
    });
    expect(dialectSetting('other,receipt.status=doc')).toEqual({
      default: 'other',
      points: { 'receipt.status': 'doc' },
    });
  });

  it('refuses a side that is not doc or other, naming the variable and the item', () => {
    for (const value of ['maybe', 'inquiry.status=maybe', 'inquiry.status', 'a=b=c', 'doc,,other']) {
      const problems = problemsOf(value);
      expect(problems, value).toHaveLength(1);
      expect(problems[0]).toMatch(/^SANDBOX_DIALECT=/);
    }
    expect(problemsOf('inquiry.status=maybe')[0]).toContain(
      '"inquiry.status=maybe" is not doc, other or point=',
    );
  });

  it('an unknown point id: the sandbox refuses it, naming it and the known ones', async () => {
    const setting = dialectSetting('inquiry.status=other,inquiry.colour=other');
    expect(() => dialectOf(setting)).toThrow(DialectError);
    expect(() => dialectOf(setting)).toThrow(
      /unknown open point "inquiry.colour" \(known: token\.expires_in, /,
    );
    await expect(startDialectSandbox({ dialect: setting })).rejects.toThrow(/inquiry\.colour/);
    expect(dialectOf(dialectSetting('other,kyc.status=doc'))).toEqual({
      default: 'other',
      points: { 'kyc.status': 'doc' },
    });
  });
});

describe('npm run sandbox', () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  });

  async function runSandbox(dialect: string) {
    const port = await freePort();
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'sandbox/main.ts')], {
      cwd: ROOT,
      env: {
        ...process.env,
        NODE_ENV: 'test',
        LOG_LEVEL: 'silent',
        SANDBOX_PORT: String(port),
        SANDBOX_DIALECT: dialect,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr?.on('data', (b: Buffer) => {
      stderr += b.toString('utf8');
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    return { url: `http://127.0.0.1:${port}`, exited, stderr: () => stderr };
  }

  it('stops at once on an unknown point, naming it', async () => {
    const run = await runSandbox('auth.header=other,inquiry.colour=other');
    expect(await run.exited).toBe(1);
    expect(run.stderr()).toContain('SANDBOX_DIALECT: unknown open point "inquiry.colour"');
    expect(run.stderr()).not.toMatch(/\n\s+at /);
  });

  it('answers in the dialect it is given', async () => {
    const run = await runSandbox('other,inquiry.status=doc');
    const sides = await waitUntil(
      () =>
        fetch(`${run.url}/sandbox/dialect`)
          .then(async (r) => ((await r.json()) as { sides: Record<string, string> }).sides)
          .catch(() => undefined),
      (v) => v !== undefined,
      { timeoutMs: 30_000, intervalMs: 50 },
    );
    expect(sides).toEqual(
      Object.fromEntries(OPEN_POINT_IDS.map((id) => [id, id === 'inquiry.status' ? 'doc' : 'other'])),
    );
    const token = await fetch(`${run.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_id=sandbox-client&client_secret=sandbox-secret&grant_type=client_credentials',
    });
    expect(((await token.json()) as { expires_in: unknown }).expires_in).toBe('3600');
  });
});
