import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { freeStackPorts, newDataDir } from '../../scripts/embedded-stack';
import { NODE_RUNTIME_FLAGS, temporalRuntimeEnv } from '../../scripts/runtime-tuning';
import { ensureTemporalCli } from '../../scripts/temporal-tools';
import { freePort, tcpOpen } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';

// `npm start` run the way a person or a process manager runs it, stopped every way they stop
// it: each time every port must be free and every process it started gone within 15 s.

const ROOT = path.resolve(__dirname, '../..');

interface Proc {
  pid: number;
  ppid: number;
  state: string;
  /** Start time in clock ticks since boot: a pid used again by another process differs here. */
  since: string;
  command: string;
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command is in parentheses and may hold spaces; the fields after it are plain.
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    const command = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ').trim();
    return { pid, ppid: Number(fields[1]), state: fields[0] ?? '', since: fields[19] ?? '', command };
  } catch {
    return undefined;
  }
}

/** Every living process below `root`, found through the parent pids in /proc. */
function descendants(root: number): Proc[] {
  const all = readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map((d) => readProc(Number(d)))
    .filter((p): p is Proc => p !== undefined);
  const found: Proc[] = [];
  let parents = new Set([root]);
  while (parents.size > 0) {
    const children = all.filter((p) => parents.has(p.ppid));
    found.push(...children);
    parents = new Set(children.map((p) => p.pid));
  }
  return found;
}

/** Still running: the same process (not a zombie waiting to be reaped, not a new one on its pid). */
const running = (p: Proc) => {
  const now = readProc(p.pid);
  return now !== undefined && now.since === p.since && now.state !== 'Z';
};

interface Started {
  /** npm itself, or `script` around it when run on a terminal. */
  top: ChildProcess;
  npmPid: number;
  /** The process npm runs: scripts/start.ts, which starts every part. */
  starterPid: number;
  ports: Awaited<ReturnType<typeof freeStackPorts>>;
  dataDir: string;
  procs: Proc[];
  output: () => string;
  exitCode: Promise<number | null>;
}

function killAll(procs: Proc[]) {
  for (const p of procs) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone meanwhile
    }
  }
}

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function npmStart(opts: { terminal?: boolean; env?: NodeJS.ProcessEnv } = {}): Promise<Started> {
  const ports = await freeStackPorts();
  const dataDir = newDataDir('signals');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    DATA_DIR: dataDir,
  };
  for (const k of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'PROVIDER_BASE_URL', 'API_KEYS', 'LOG_LEVEL'])
    delete env[k];
  Object.assign(env, opts.env);
  // A group of its own, as a shell gives a job; on a terminal, `script` gives npm a real one.
  // `exec`: an interactive shell is not in its job's foreground group, and a `sh -c` that
  // waits for npm (dash does not exec the last command) would die of the Ctrl-C itself.
  const top = opts.terminal
    ? spawn('script', ['-qfec', 'exec npm start', '/dev/null'], {
        cwd: ROOT,
        env,
        detached: true,
        stdio: ['pipe', 'pipe', 'pipe'],
      })
    : spawn('npm', ['start'], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  top.stdout?.on('data', (b) => {
    out += b;
  });
  top.stderr?.on('data', (b) => {
    out += b;
  });
  const exitCode = new Promise<number | null>((r) => top.on('exit', (code) => r(code)));
  let known: Proc[] = [];
  cleanups.push(() => {
    // Whatever a failed case left behind (orphans too), so the next one starts clean.
    killAll([...known.filter(running), ...(top.pid ? descendants(top.pid) : [])]);
    top.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  });
  await waitUntil(
    // The banner's last line: its lines can arrive in separate chunks.
    () => out.includes('Ctrl-C stops everything.') || top.exitCode !== null,
    (settled) => settled,
    { timeoutMs: 150_000, intervalMs: 250 },
  ).catch(() => {}); // the output, checked next, says what did not come up
  expect(out).toContain('pixflow is up');
  const procs = descendants(top.pid as number);
  known = procs;
  const npm = opts.terminal
    ? procs.find((p) => /(^|\/)npm start$/.test(p.command))
    : readProc(top.pid as number);
  const starter = procs.find((p) => p.ppid === npm?.pid);
  expect(starter?.command).toMatch(/scripts\/start\.ts$/);
  return {
    top,
    npmPid: npm?.pid as number,
    starterPid: starter?.pid as number,
    ports,
    dataDir,
    procs,
    output: () => out,
    exitCode,
  };
}

/** Every port free and every process of the stack gone, within 15 s of the signal. */
async function expectAllGone(s: Started) {
  const left = async () => {
    const open = [];
    for (const [name, port] of Object.entries(s.ports)) if (await tcpOpen(port)) open.push(name);
    const procs = s.procs.filter(running).map((p) => `${p.pid} ${p.command.slice(0, 80)}`);
    return { open, procs };
  };
  const after = await waitUntil(left, (l) => l.open.length === 0 && l.procs.length === 0, {
    timeoutMs: 15_000,
    intervalMs: 200,
  }).catch(async () => left());
  expect(after, s.output().slice(-3000)).toEqual({ open: [], procs: [] });
  // Postgres removes its lock file only when it shuts down (fast shutdown: no recovery next start).
  expect(existsSync(path.join(s.dataDir, 'pg', 'postmaster.pid'))).toBe(false);
}

/** The stop every part made on its own terms, and the one line that says it is over. */
async function expectOrderlyStop(s: Started, reason: string) {
  expect(await s.exitCode).toBe(0);
  const out = s.output();
  expect(out).toContain(`pixflow stopped (${reason}): every part is down.`);
  expect(out).toContain('database system is shut down');
  expect(out).not.toContain('exited unexpectedly');
}

/**
 * Postgres told to stop only once the API and worker are gone: the terminal's Ctrl-C reached
 * npm start alone, not Postgres with it, which would end their connections under them.
 */
function expectPostgresStoppedLast(out: string) {
  const after = (what: string) => out.slice(out.indexOf(what));
  expect(out).toContain('api stopped');
  expect(out).toContain('worker stopping');
  expect(after('api stopped')).toContain('received fast shutdown request');
  expect(after('worker stopping')).toContain('received fast shutdown request');
  expect(out).not.toContain('terminating connection');
}

/** What the banner promises: each part up and answering where it says. */
async function expectEveryPartAnswers({ ports, output }: Started) {
  expect(output()).toContain(`http://127.0.0.1:${ports.API_PORT}`);
  expect(output()).toContain(`http://127.0.0.1:${ports.TEMPORAL_UI_PORT}`);
  const api = await fetch(`http://127.0.0.1:${ports.API_PORT}/readyz`);
  expect(await api.json()).toMatchObject({ status: 'ready', temporal: 'ok', postgres: 'ok' });
  expect((await fetch(`http://127.0.0.1:${ports.SANDBOX_PORT}/healthz`)).status).toBe(200);
  expect((await fetch(`http://127.0.0.1:${ports.WORKER_HTTP_PORT}/healthz`)).status).toBe(200);
  // The worker's metrics: ours and the Temporal SDK's, on one endpoint.
  const workerMetrics = await (await fetch(`http://127.0.0.1:${ports.WORKER_HTTP_PORT}/metrics`)).text();
  expect(workerMetrics).toContain('pixflow_provider_token_requests');
  expect(workerMetrics).toMatch(/^temporal_\w+/m);
  expect((await fetch(`http://127.0.0.1:${ports.TEMPORAL_UI_PORT}/`)).status).toBe(200);
  // The UI, on its own port, may decode payloads through the API's codec endpoint.
  const uiOrigin = `http://127.0.0.1:${ports.TEMPORAL_UI_PORT}`;
  const preflight = await fetch(`http://127.0.0.1:${ports.API_PORT}/codec/decode`, {
    method: 'OPTIONS',
    headers: { origin: uiOrigin, 'access-control-request-method': 'POST' },
  });
  expect(preflight.headers.get('access-control-allow-origin')).toBe(uiOrigin);
  const decode = await fetch(`http://127.0.0.1:${ports.API_PORT}/codec/decode`, {
    method: 'POST',
    headers: { origin: uiOrigin, 'content-type': 'application/json' },
    body: JSON.stringify({ payloads: [] }),
  });
  expect(decode.status).toBe(200);
  expect(await tcpOpen(ports.PIXFLOW_TEMPORAL_PORT)).toBe(true);
  await expectDevOperatorsSignIn(`http://127.0.0.1:${ports.API_PORT}`, output());
}

/**
 * Its own secrets, made in its data folder for its owner alone: the ingress answers to the
 * folder's webhook secret, and the public one config.ts once gave it opens nothing.
 */
async function expectOwnSecrets({ ports, dataDir, output }: Started) {
  const file = path.join(dataDir, 'secrets.json');
  expect(statSync(file).mode & 0o777).toBe(0o600);
  expect(output()).toContain(file);
  const { WEBHOOK_SECRET } = JSON.parse(readFileSync(file, 'utf8')) as { WEBHOOK_SECRET: string };
  // An unknown point: past the secret it is a 404, before it a 401, and nothing is stored.
  const post = (secret: string) =>
    fetch(`http://127.0.0.1:${ports.API_PORT}/webhooks/provider/${secret}/nope`, {
      method: 'POST',
      body: '{}',
    });
  expect((await post('dev-webhook-secret-change-me')).status).toBe(401);
  expect((await post(WEBHOOK_SECRET)).status).toBe(404);
}

/** The parts run with the garbage collection settings npm start gives them (runtime-tuning.ts). */
function expectTunedRuntimes({ procs }: Started) {
  for (const script of ['worker/main.ts', 'api/main.ts', 'sandbox/main.ts']) {
    const part = procs.find((p) => p.command.includes(script));
    expect(part?.command.split(' '), script).toEqual(expect.arrayContaining([...NODE_RUNTIME_FLAGS]));
  }
  const temporal = procs.find((p) => p.command.includes('start-dev'));
  const env = readFileSync(`/proc/${temporal?.pid}/environ`, 'utf8').split('\0');
  const want = temporalRuntimeEnv(process.env);
  expect(env).toEqual(expect.arrayContaining([`GOGC=${want.GOGC}`, `GOMEMLIMIT=${want.GOMEMLIMIT}`]));
}

/**
 * The back office's dev operators, as the banner prints them, sign in: a reviewer, and two who may
 * approve a large payout (four eyes needs two different ones).
 */
async function expectDevOperatorsSignIn(api: string, output: string) {
  const printed = [...output.matchAll(/^ {4}(\w+) +(\S+@pixflow\.local) \/ (\S+)/gm)].map((m) => m.slice(1));
  expect(printed.map(([role, email]) => [role, email])).toEqual([
    ['reviewer', 'reviewer@pixflow.local'],
    ['approver', 'approver@pixflow.local'],
    ['admin', 'admin@pixflow.local'],
  ]);
  for (const [, email, password] of printed) await expectSignsIn(api, String(email), String(password));
}

async function expectSignsIn(api: string, email: string, password: string) {
  const form = await fetch(`${api}/backoffice/sign-in`);
  const cookie = form.headers.get('set-cookie')?.split(';')[0] ?? '';
  const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? '';
  const res = await fetch(`${api}/backoffice/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: token, email: String(email), password: String(password) }),
  });
  expect(res.status).toBe(303);
  expect(res.headers.get('location')).toBe('/backoffice');
}

describe('npm start stops every part, whichever way it is stopped', () => {
  it('SIGTERM to npm (a process manager stopping the service); its logs are JSON lines', async () => {
    const s = await npmStart();
    // The parts' logs come through, as JSON lines when nobody reads them on a terminal.
    const lines = s.output().split('\n');
    for (const msg of ['api listening', 'worker started', 'provider sandbox listening']) {
      const line = lines.find((l) => l.includes(`"msg":"${msg}"`));
      expect(line, msg).toBeDefined();
      expect(JSON.parse(line as string)).toMatchObject({ level: 30, msg });
    }
    expect(s.output()).toMatch(/logs .*JSON lines; LOG_LEVEL=info/);
    // The worker says it bundled its workflows in one line, without webpack's report of each module.
    expect(lines.find((l) => l.includes('Workflow bundle created'))).toBeDefined();
    expect(lines.filter((l) => /webpack [\d.]+ compiled/.test(l))).toEqual([]);
    process.kill(s.npmPid, 'SIGTERM');
    await expectAllGone(s);
    await expectOrderlyStop(s, 'SIGTERM');
  }, 200_000);

  it('with NODE_ENV=production and the secrets only the operator can give: its Postgres has a password of its own', async () => {
    const s = await npmStart({
      env: {
        NODE_ENV: 'production',
        API_KEYS: randomBytes(32).toString('hex'),
        ELIGIBILITY_SECRET: `whsec_${randomBytes(32).toString('base64')}`,
      },
    });
    // Production refuses a public Postgres password: the API and worker started on this one.
    expect(s.output()).not.toContain('DATABASE_URL');
    process.kill(s.npmPid, 'SIGTERM');
    await expectAllGone(s);
    await expectOrderlyStop(s, 'SIGTERM');
  }, 200_000);

  it('SIGINT to npm', async () => {
    const s = await npmStart();
    process.kill(s.npmPid, 'SIGINT');
    await expectAllGone(s);
    await expectOrderlyStop(s, 'SIGINT');
  }, 200_000);

  it('SIGTERM to the process npm runs, once every part answers on its port', async () => {
    const s = await npmStart();
    await expectEveryPartAnswers(s);
    await expectOwnSecrets(s);
    expectTunedRuntimes(s);
    process.kill(s.starterPid, 'SIGTERM');
    await expectAllGone(s);
    await expectOrderlyStop(s, 'SIGTERM');
  }, 200_000);

  it('SIGTERM to the whole process group', async () => {
    const s = await npmStart();
    process.kill(-s.npmPid, 'SIGTERM');
    await expectAllGone(s);
    await expectOrderlyStop(s, 'SIGTERM');
  }, 200_000);

  it('Ctrl-C on a terminal (SIGINT to the foreground group); its logs are readable lines', async () => {
    const s = await npmStart({ terminal: true });
    const out = stripVTControlCharacters(s.output());
    expect(out).toMatch(/INFO \(api\): api listening/);
    expect(out).not.toContain('"msg":"api listening"');
    expect(out).toMatch(/logs .*readable lines; LOG_LEVEL=info/);
    s.top.stdin?.write('\x03');
    await expectAllGone(s);
    await expectOrderlyStop(s, 'SIGINT');
    expectPostgresStoppedLast(stripVTControlCharacters(s.output()));
  }, 200_000);

  it('SIGKILL of npm: the process it ran sees its parent gone and stops every part', async () => {
    const s = await npmStart();
    process.kill(s.npmPid, 'SIGKILL');
    await expectAllGone(s);
    expect(s.output()).toContain('pixflow stopped (parent process gone): every part is down.');
    expect(s.output()).toContain('database system is shut down');
  }, 200_000);

  it('SIGKILL of the process that started the parts: they stop by themselves', async () => {
    const s = await npmStart();
    process.kill(s.starterPid, 'SIGKILL');
    await expectAllGone(s);
  }, 200_000);
});

/**
 * A `temporal` that fails its first `server start-dev` with `line` on stderr and exit 2, then
 * runs the real CLI: how the dev server exits when a port it picked is taken before it binds.
 */
function cliFailingOnceWith(line: string): string {
  const dir = newDataDir('fake-cli');
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'temporal');
  const marker = path.join(dir, 'failed-once');
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      `if [ "$1 $2" = "server start-dev" ] && [ ! -e '${marker}' ]; then`,
      `  : > '${marker}'`,
      `  echo '${line}' >&2`,
      '  exit 2',
      'fi',
      `exec '${ensureTemporalCli()}' "$@"`,
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
  return file;
}

describe('npm start on a busy machine', () => {
  it('starts Temporal again when another process took a port it picked, and comes up', async () => {
    const cli = cliFailingOnceWith(
      'panic: listen tcp 127.0.0.1:41234: bind: address already in use [recovered]',
    );
    const s = await npmStart({ env: { TEMPORAL_CLI: cli } });
    expect(s.output()).toContain(
      'Temporal lost one of the ports it picked to another process; starting it again...',
    );
    await expectEveryPartAnswers(s);
    process.kill(s.npmPid, 'SIGTERM');
    await expectAllGone(s);
    await expectOrderlyStop(s, 'SIGTERM');
  }, 200_000);

  it('any other early exit of Temporal stops the start at once, with its output', async () => {
    const ports = await freeStackPorts();
    const dataDir = newDataDir('signals');
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      DATA_DIR: dataDir,
      TEMPORAL_CLI: cliFailingOnceWith('Error: unknown flag: --sqlite-pragma'),
    };
    for (const k of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'PROVIDER_BASE_URL', 'API_KEYS']) delete env[k];
    const r = spawnSync('npm', ['start'], { cwd: ROOT, env, encoding: 'utf8', timeout: 150_000 });
    const out = r.stdout + r.stderr;
    expect(r.status, out.slice(-2000)).toBe(1);
    expect(out).toContain('Temporal exited while starting');
    expect(out).toContain('unknown flag: --sqlite-pragma');
    expect(out).not.toContain('starting it again');
    expect(out).toContain('database system is shut down');
  }, 200_000);
});

describe('a part on its own (npm run sandbox, the API or the worker)', () => {
  const sandboxEnv = async () => ({
    ...process.env,
    SANDBOX_PORT: String(await freePort()),
    LOG_LEVEL: 'info',
  });

  it('stops on SIGHUP (its terminal closed), saying why, with exit 0', async () => {
    const env = await sandboxEnv();
    const part = spawn(process.execPath, ['--import', 'tsx', 'sandbox/main.ts'], { cwd: ROOT, env });
    cleanups.push(() => part.kill('SIGKILL'));
    let out = '';
    part.stdout.on('data', (b) => {
      out += b;
    });
    const code = new Promise<number | null>((r) => part.on('exit', (c) => r(c)));
    await waitUntil(() => tcpOpen(Number(env.SANDBOX_PORT)), Boolean, 30_000);
    part.kill('SIGHUP');
    expect(await code).toBe(0);
    expect(out).toContain('"reason":"SIGHUP"');
  });

  it('npm run sandbox stops on SIGTERM to npm (what a process manager sends)', async () => {
    const env = await sandboxEnv();
    const npm = spawn('npm', ['run', 'sandbox'], { cwd: ROOT, env, detached: true, stdio: 'ignore' });
    cleanups.push(() => killAll(descendants(npm.pid as number)));
    await waitUntil(() => tcpOpen(Number(env.SANDBOX_PORT)), Boolean, 30_000);
    const procs = descendants(npm.pid as number);
    cleanups.push(() => killAll(procs.filter(running)));
    const code = new Promise<number | null>((r) => npm.on('exit', (c) => r(c)));
    npm.kill('SIGTERM');
    expect(await code).toBe(0);
    await waitUntil(
      () => procs.filter(running).length,
      (n) => n === 0,
      5_000,
    );
    expect(await tcpOpen(Number(env.SANDBOX_PORT))).toBe(false);
  });

  it('stops by itself when its parent dies, even by SIGKILL', async () => {
    const env = await sandboxEnv();
    // A parent that starts the part and is then killed without a chance to stop it.
    const parent = spawn('sh', ['-c', `"${process.execPath}" --import tsx sandbox/main.ts & echo $!; wait`], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    cleanups.push(() => parent.kill('SIGKILL'));
    let out = '';
    parent.stdout?.on('data', (b) => {
      out += b;
    });
    await waitUntil(() => tcpOpen(Number(env.SANDBOX_PORT)), Boolean, 30_000);
    const part = readProc(Number(out.split('\n')[0])) as Proc;
    cleanups.push(() => killAll([part].filter(running)));
    parent.kill('SIGKILL');
    await waitUntil(
      () => running(part),
      (r) => !r,
      5_000,
    );
    expect(await tcpOpen(Number(env.SANDBOX_PORT))).toBe(false);
  });
});

describe('logs of a service run by hand', () => {
  const log = "require('./common/logger').createLogger('probe').info({ n: 1 }, 'hello')";

  it('are JSON lines into a pipe or a file', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', log], { cwd: ROOT, encoding: 'utf8' });
    expect(JSON.parse(r.stdout)).toMatchObject({ level: 30, name: 'probe', n: 1, msg: 'hello' });
  });

  it('are readable lines on a terminal', () => {
    const cmd = `"${process.execPath}" --import tsx -e "${log}"`;
    const r = spawnSync('script', ['-qec', cmd, '/dev/null'], { cwd: ROOT, encoding: 'utf8' });
    expect(stripVTControlCharacters(r.stdout)).toMatch(/^\[[\d:.]+\] INFO \(probe\): hello \{"n":1\}/m);
  });
});
