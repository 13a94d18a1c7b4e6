import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freeStackPorts, newDataDir } from '../../scripts/embedded-stack';
import { tcpOpen } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';

const ROOT = path.resolve(__dirname, '../..');
const tsxArgs = (file: string) => ['--import', 'tsx', path.join(ROOT, file)];

describe('wrong configuration fails fast, naming the variable', () => {
  for (const [file, env, variable] of [
    ['api/main.ts', { API_PORT: 'not-a-port' }, 'API_PORT'],
    ['api/main.ts', { DATABASE_URL: 'mysql://u:p@h/db' }, 'DATABASE_URL'],
    ['worker/main.ts', { WORKER_HTTP_PORT: '70000' }, 'WORKER_HTTP_PORT'],
    ['scripts/start.ts', { SANDBOX_PORT: '-1' }, 'SANDBOX_PORT'],
  ] as const) {
    it(`${file} with a bad ${variable}`, () => {
      const r = spawnSync(process.execPath, tsxArgs(file), {
        cwd: ROOT,
        env: { ...process.env, API_KEYS: 'k', ...env },
        encoding: 'utf8',
        timeout: 30_000,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(variable);
      expect(r.stderr).not.toMatch(/^\s+at /m); // one line per problem, no stack trace
    });
  }

  it('the api refuses to start without API keys', () => {
    const env: NodeJS.ProcessEnv = { ...process.env, DATABASE_URL: 'postgresql://u:p@127.0.0.1:1/db' };
    delete env.API_KEYS;
    const r = spawnSync(process.execPath, tsxArgs('api/main.ts'), {
      cwd: ROOT,
      env,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('API_KEYS');
  });
});

describe('exit codes survive the embedded Postgres module', () => {
  it('a process that loads db/embedded keeps its own exit code (a failing test run must not exit 0)', () => {
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', '-e', "require('./db/embedded'); process.exitCode = 3;"],
      {
        cwd: ROOT,
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(r.status).toBe(3);
  });
});

describe('npm start (scripts/start.ts)', () => {
  it('brings every part up, answers on each port, and stops all of it on SIGTERM with exit 0', async () => {
    const ports = await freeStackPorts();
    const temporalPort = ports.PIXFLOW_TEMPORAL_PORT;
    const dataDir = newDataDir('start');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
      // PIXFLOW_TEMPORAL_PORT is among the ports; not TEMPORAL_ADDRESS, which would mean "use an
      // existing cluster".
      DATA_DIR: dataDir,
    };
    delete env.TEMPORAL_ADDRESS;
    delete env.DATABASE_URL;
    delete env.PROVIDER_BASE_URL;
    delete env.API_KEYS;
    const child = spawn(process.execPath, tsxArgs('scripts/start.ts'), {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (b) => {
      out += b;
    });
    child.stderr.on('data', (b) => {
      out += b;
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    try {
      await waitUntil(
        // The banner's last line: its lines can arrive in separate chunks.
        () => out.includes('Ctrl-C stops everything.') || child.exitCode !== null,
        (settled) => settled,
        { timeoutMs: 150_000, intervalMs: 500 },
      ).catch(() => {}); // the output, checked next, says what did not come up
      expect(out).toContain('pixflow is up');
      expect(out).toContain(`http://127.0.0.1:${ports.API_PORT}`);
      expect(out).toContain(`http://127.0.0.1:${ports.TEMPORAL_UI_PORT}`);
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
      expect(await tcpOpen(temporalPort)).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    // Every part, the embedded Postgres included, is gone.
    for (const port of Object.values(ports)) {
      expect(await tcpOpen(port), `port ${port} still open`).toBe(false);
    }
  }, 200_000);
});
