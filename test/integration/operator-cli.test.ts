import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { passwordMatches } from '../../common/passwords';
import { operatorForSignIn } from '../../db/operators';
import { createPool } from '../../db/pool';

// `npm run operator`: the way a real deployment gets its back-office accounts, run as a person
// runs it, against the test run's Postgres.

const ROOT = path.resolve(__dirname, '../..');
const pool = createPool(inject('databaseUrl'), 2);
afterAll(() => pool.end());

function operatorCli(args: string[], input?: string) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/operator.ts'), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: inject('databaseUrl') },
      input,
      encoding: 'utf8',
    },
  );
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const address = () => `op-${randomBytes(4).toString('hex')}@Example.com`;

describe('npm run operator', () => {
  it('creates an operator with a generated password shown once; only its hash is kept', async () => {
    const email = address();
    const r = operatorCli([
      'create',
      '--email',
      email,
      '--name',
      'Ana',
      '--role',
      'reviewer',
      '--zone',
      'America/Manaus',
    ]);
    expect(r.status, r.err).toBe(0);
    const password = /password \(shown once\): (\S+)/.exec(r.out)?.[1];
    expect(password?.length).toBeGreaterThanOrEqual(20);
    const found = await operatorForSignIn(pool, email);
    expect(found?.operator).toMatchObject({
      email: email.toLowerCase(),
      name: 'Ana',
      role: 'reviewer',
      timeZone: 'America/Manaus',
    });
    expect(found?.passwordHash).toMatch(/^\$argon2id\$/);
    expect(found?.passwordHash).not.toContain(String(password));
    expect(await passwordMatches(found?.passwordHash, String(password))).toBe(true);
    expect(await passwordMatches(found?.passwordHash, 'something else entirely')).toBe(false);

    // Once per address, however it is typed.
    const again = operatorCli(['create', '--email', email.toUpperCase(), '--role', 'admin']);
    expect(again.status).toBe(1);
    expect(again.err).toContain('exists already');
    expect((await operatorForSignIn(pool, email))?.operator.role).toBe('reviewer');
  });

  it('resets a password read from standard input, keeping the role; disables an operator', async () => {
    const email = address();
    expect(operatorCli(['create', '--email', email, '--role', 'viewer']).status).toBe(0);
    const reset = operatorCli(['reset', '--email', email, '--password-stdin'], 'a new long passphrase\n');
    expect(reset.status, reset.err).toBe(0);
    expect(reset.out).not.toContain('shown once');
    const found = await operatorForSignIn(pool, email);
    expect(found?.operator.role).toBe('viewer');
    expect(await passwordMatches(found?.passwordHash, 'a new long passphrase')).toBe(true);

    expect(operatorCli(['disable', '--email', email]).status).toBe(0);
    expect((await operatorForSignIn(pool, email))?.operator.disabled).toBe(true);
    expect(operatorCli(['disable', '--email', email]).status).toBe(1);
  });

  it('changes only the role of an enabled operator; a role is needed', async () => {
    const email = address();
    expect(operatorCli(['create', '--email', email, '--role', 'reviewer']).status).toBe(0);
    const hash = (await operatorForSignIn(pool, email))?.passwordHash;
    const changed = operatorCli(['role', '--email', email, '--role', 'admin']);
    expect(changed.status, changed.err).toBe(0);
    const found = await operatorForSignIn(pool, email);
    expect(found?.operator.role).toBe('admin');
    expect(found?.passwordHash).toBe(hash);
    const none = operatorCli(['role', '--email', email]);
    expect(none.status).toBe(2);
    expect(none.err).toContain('--role');
    expect(operatorCli(['role', '--email', address(), '--role', 'viewer']).status).toBe(1);
  });

  it('makes an approver, and makes one of a reviewer; the usage names the role', async () => {
    const email = address();
    const made = operatorCli(['create', '--email', email, '--role', 'approver']);
    expect(made.status, made.err).toBe(0);
    expect(made.out).toContain('(approver)');
    expect((await operatorForSignIn(pool, email))?.operator.role).toBe('approver');
    const other = address();
    expect(operatorCli(['create', '--email', other, '--role', 'reviewer']).status).toBe(0);
    expect(operatorCli(['role', '--email', other, '--role', 'approver']).status).toBe(0);
    expect((await operatorForSignIn(pool, other))?.operator.role).toBe('approver');
    expect(operatorCli(['role', '--email', other]).err).toContain('viewer|reviewer|approver|admin');
  });

  it('refuses bad arguments naming each, and a short password, creating nothing', async () => {
    const email = address();
    const bad = operatorCli([
      'create',
      '--email',
      'not-an-address',
      '--role',
      'boss',
      '--zone',
      'Mars/Olympus',
    ]);
    expect(bad.status).toBe(2);
    for (const name of ['--email', '--role', '--zone']) expect(bad.err).toContain(name);
    const short = operatorCli(['create', '--email', email, '--password-stdin'], 'short\n');
    expect(short.status).toBe(1);
    expect(short.err).toContain('at least 12 characters');
    expect(await operatorForSignIn(pool, email)).toBeUndefined();
  });
});
