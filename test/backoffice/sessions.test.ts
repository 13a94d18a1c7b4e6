import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createApp } from '../../api/app';
import { labelsFor } from '../../backoffice/i18n';
import { loadConfig } from '../../common/config';
import { createLogger } from '../../common/logger';
import { hashPassword } from '../../common/passwords';
import { saveOperator } from '../../db/operators';
import { API_KEY, type ApiEnv, startApiEnv } from '../api/support';

// When an operator's back-office sessions end: a password reset, a disable (and a reset after
// it) and a role change, each through the real `npm run operator`, end every session that
// operator has on every API process; a session ends at its absolute lifetime however busy it is;
// sign-ins the rate limit refuses are in the audit trail. Two API processes of one deployment:
// the test env's, and a second app on the same Postgres whose sessions last 3 s at most.

const ROOT = path.resolve(__dirname, '../..');
const PASSWORD = 'the operator password 1';
const SHORT_MAX_AGE_MS = 3_000;

let e: ApiEnv;
let databaseUrl: string;
let second: { url: string; close(): Promise<void> };
let n = 0;

/** A second API process of the same deployment: the same database, its own settings. */
async function secondApi(env: Record<string, string>) {
  const config = loadConfig({
    API_KEYS: API_KEY,
    TEMPORAL_TASK_QUEUE: e.taskQueue,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const app = createApp({
    config,
    temporal: e.temporal,
    pool: e.pool,
    log: createLogger('api-2', 'silent'),
    policy: e.policy,
  });
  const server: http.Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** `npm run operator -- ...` as a person runs it (not blocking: this process serves the APIs). */
async function operatorCli(args: string[], input?: string): Promise<string> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/operator.ts'), ...args],
    {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl },
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  child.stdin.end(input ?? '');
  const [status] = (await once(child, 'close')) as [number | null];
  expect(status, `operator ${args.join(' ')}: ${err}`).toBe(0);
  return out;
}

async function newOperator(role: 'viewer' | 'reviewer' | 'admin' = 'reviewer') {
  const email = `session-${++n}@example.com`;
  await saveOperator(e.pool, { email, role, passwordHash: await hashPassword(PASSWORD) });
  return email;
}

const cookieOf = (res: Response) => res.headers.get('set-cookie')?.split(';')[0] ?? '';
const tokenIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';

/** The sign-in form as a browser posts it; the answer, and the session cookie it set. */
async function postSignIn(api: string, email: string, password: string) {
  const form = await fetch(`${api}/backoffice/sign-in`);
  const pre = cookieOf(form);
  const res = await fetch(`${api}/backoffice/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: pre, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: tokenIn(await form.text()), email, password }).toString(),
  });
  return { res, cookie: cookieOf(res) || pre };
}

async function signIn(api: string, email: string, password = PASSWORD): Promise<string> {
  const { res, cookie } = await postSignIn(api, email, password);
  expect(res.status, await res.text()).toBe(303);
  expect(await signedInAs(api, cookie)).toBe(email);
  return cookie;
}

/** Who the home page says is signed in with this cookie; undefined when it sends to sign-in. */
async function signedInAs(api: string, cookie: string): Promise<string | undefined> {
  const res = await fetch(`${api}/backoffice`, { redirect: 'manual', headers: { cookie } });
  if (res.status === 303) {
    expect(res.headers.get('location')).toMatch(/^\/backoffice\/sign-in/);
    return undefined;
  }
  expect(res.status).toBe(200);
  return /<span class="who">([^ <]+) \(/.exec(await res.text())?.[1];
}

/** A signed-in action (signing out, which is audited) as a form post with the page's token. */
async function signOut(api: string, cookie: string) {
  const home = await fetch(`${api}/backoffice/sign-in`, { headers: { cookie } });
  return fetch(`${api}/backoffice/sign-out`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: tokenIn(await home.text()) }).toString(),
  });
}

const storedSessions = async (email: string) =>
  (
    await e.pool.query(
      `SELECT count(*)::int AS n FROM backoffice_sessions s JOIN operators o
          ON s.sess->>'operatorId' = o.id::text WHERE o.email = $1`,
      [email],
    )
  ).rows[0]?.n as number;

beforeAll(async () => {
  e = await startApiEnv({}, { env: { BACKOFFICE_SIGNIN_ATTEMPTS: '3' } });
  // The env's own database, for the CLI: the run's server, the env's database name.
  const u = new URL(inject('databaseUrl'));
  u.pathname = `/${(await e.pool.query('SELECT current_database() AS name')).rows[0]?.name}`;
  databaseUrl = u.toString();
  second = await secondApi({ BACKOFFICE_SESSION_MAX_AGE_MS: String(SHORT_MAX_AGE_MS) });
}, 120_000);

afterAll(async () => {
  await second?.close();
  await e?.close();
});

describe('back-office sessions end', () => {
  it('at a password reset with the CLI: every session of the operator, on every API process', async () => {
    const email = await newOperator();
    const other = await newOperator();
    const sessions = [
      await signIn(e.url, email),
      await signIn(e.url, email),
      await signIn(second.url, email),
    ];
    const bystander = await signIn(e.url, other);
    expect(await storedSessions(email)).toBe(3);

    await operatorCli(['reset', '--email', email, '--password-stdin'], 'a brand new passphrase\n');

    for (const cookie of sessions) {
      expect(await signedInAs(e.url, cookie)).toBeUndefined();
      expect(await signedInAs(second.url, cookie)).toBeUndefined();
    }
    // An action with the old cookie and its form token is refused too, not only pages.
    expect((await signOut(e.url, sessions[0] as string)).status).toBeGreaterThanOrEqual(400);
    expect(await storedSessions(email)).toBe(0);
    // Someone else's session goes on; the new password signs in, the old one no longer does.
    expect(await signedInAs(e.url, bystander)).toBe(other);
    await signIn(e.url, email, 'a brand new passphrase');
    expect((await postSignIn(second.url, email, PASSWORD)).res.status).toBe(401);
  });

  it('at a disable, and a reset after it does not bring the old session back', async () => {
    const email = await newOperator();
    const cookie = await signIn(e.url, email);
    await operatorCli(['disable', '--email', email]);
    expect(await signedInAs(e.url, cookie)).toBeUndefined();
    await operatorCli(['reset', '--email', email, '--password-stdin'], `${PASSWORD}\n`);
    expect(await signedInAs(e.url, cookie)).toBeUndefined();
    expect(await signedInAs(second.url, cookie)).toBeUndefined();
    // Enabled again, with the same password even: only a new sign-in gets in.
    await signIn(e.url, email);
  });

  it('at a role change, and the new session has the new role', async () => {
    const email = await newOperator('reviewer');
    const cookie = await signIn(e.url, email);
    expect(await operatorCli(['role', '--email', email, '--role', 'viewer'])).toContain('is now viewer');
    expect(await signedInAs(e.url, cookie)).toBeUndefined();
    const again = await signIn(e.url, email);
    const home = await fetch(`${e.url}/backoffice`, { headers: { cookie: again } });
    expect(await home.text()).toContain(`${email} (${labelsFor('pt-BR').role('viewer')})`);
  });

  it('at the absolute lifetime, although the session is used all the time', async () => {
    const email = await newOperator();
    const signedInAt = Date.now();
    const cookie = await signIn(second.url, email);
    // Used every 250 ms: the idle timeout (8 h) never comes near; the 3 s lifetime does.
    let endedAt = 0;
    while (Date.now() - signedInAt < SHORT_MAX_AGE_MS + 5_000) {
      const res = await fetch(`${second.url}/backoffice`, { redirect: 'manual', headers: { cookie } });
      if (res.status === 303) {
        endedAt = Date.now();
        break;
      }
      expect(res.status).toBe(200);
      // The cookie itself expires at the absolute end, not 8 h after this request.
      const expires = Date.parse(/Expires=([^;]+)/i.exec(res.headers.get('set-cookie') ?? '')?.[1] ?? '');
      expect(expires).toBeLessThanOrEqual(signedInAt + SHORT_MAX_AGE_MS + 60_000);
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(endedAt, 'the session never ended').toBeGreaterThan(0);
    expect(endedAt - signedInAt).toBeGreaterThanOrEqual(SHORT_MAX_AGE_MS);
    // A new sign-in starts a new lifetime.
    await signIn(second.url, email);
  });
});

describe('sign-ins the rate limit refuses', () => {
  it('are written to the audit trail with the address typed, never the password', async () => {
    const email = await newOperator();
    const guess = 'guessed-password-xyz';
    const answers: number[] = [];
    for (let i = 0; i < 5; i++) answers.push((await postSignIn(e.url, email, `${guess}-${i}`)).res.status);
    expect(answers).toEqual([401, 401, 401, 429, 429]);
    // Past the limit even the right password waits, and is written down as refused.
    expect((await postSignIn(e.url, email, PASSWORD)).res.status).toBe(429);

    const { rows } = await e.pool.query(
      `SELECT operator_email, outcome, reason, row_to_json(a)::text AS whole FROM operator_actions a
        WHERE action = 'sign_in' AND operator_email = $1 ORDER BY id`,
      [email],
    );
    expect(rows.map((r) => [r.outcome, r.reason])).toEqual([
      ['refused', null],
      ['refused', null],
      ['refused', null],
      ['refused', 'sign_in_rate_limited'],
      ['refused', 'sign_in_rate_limited'],
      ['refused', 'sign_in_rate_limited'],
    ]);
    for (const r of rows) {
      expect(r.whole).not.toContain(guess);
      expect(r.whole).not.toContain(PASSWORD);
    }
    // An admin reads them on the audit page (on the other API process: this one is limiting us).
    const admin = await signIn(second.url, await newOperator('admin'));
    const audit = await (
      await fetch(`${second.url}/backoffice/audit`, { headers: { cookie: admin } })
    ).text();
    expect(audit).toContain(labelsFor('pt-BR').auditReason('sign_in_rate_limited'));
  });
});
