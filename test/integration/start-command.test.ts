import { spawn, spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freeStackPorts, newDataDir } from '../../scripts/embedded-stack';

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

describe('npm start when its Postgres cannot start', () => {
  it("says so with Postgres's own words and exits 1, starting nothing else", async () => {
    const ports = await freeStackPorts();
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(ports.EMBEDDED_PG_PORT, '127.0.0.1', r));
    const dataDir = newDataDir('pg-taken');
    try {
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
        DATA_DIR: dataDir,
      };
      for (const k of ['TEMPORAL_ADDRESS', 'DATABASE_URL', 'PROVIDER_BASE_URL']) delete env[k];
      const child = spawn(process.execPath, tsxArgs('scripts/start.ts'), { cwd: ROOT, env });
      let out = '';
      child.stdout.on('data', (b) => {
        out += b;
      });
      child.stderr.on('data', (b) => {
        out += b;
      });
      const code = await new Promise<number | null>((r) => child.on('close', (c) => r(c)));
      expect(code, out).toBe(1);
      expect(out).toContain(`Postgres failed to start on port ${ports.EMBEDDED_PG_PORT}`);
      expect(out).toMatch(/last output of postgres:[\s\S]*could not bind/);
      expect(out).not.toContain('starting Temporal');
    } finally {
      taken.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

// `npm start` itself, its parts answering, and every way of stopping it: start-signals.test.ts.
