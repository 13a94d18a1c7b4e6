import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

// The bench's own stack, started the way `npm start` starts it (scripts/start.ts as a real
// process: embedded Postgres, Temporal dev server with our search attributes, sandbox, worker,
// API) on free ports with a fresh data folder.

export const ROOT = path.resolve(__dirname, '..');
export const API_KEY = 'bench-key';
export const WEBHOOK_SECRET = 'bench-webhook-secret-0123456789';
export const WEBHOOK_PARTNER_ID = 'bench-partner';

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface BenchStack {
  env: NodeJS.ProcessEnv;
  api: string;
  sandbox: string;
  ingress: string;
  temporalAddress: string;
  databaseUrl: string;
  /** pid of the worker process (a child of scripts/start.ts). */
  workerPid: number;
  output: () => string;
  stop: () => Promise<number | null>;
}

/** Children of `pid` whose command line contains `needle`. */
function childPid(pid: number, needle: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      const cmd = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmd.includes(needle)) return Number(entry);
    } catch {
      // the process went away while we looked
    }
  }
  return undefined;
}

/** Resident memory of a process in bytes (VmRSS of /proc/<pid>/status). */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN; // the process is gone: the stack's output says why
  }
}

export async function startBenchStack(extraEnv: NodeJS.ProcessEnv, timeoutMs = 240_000): Promise<BenchStack> {
  const ports = {
    API_PORT: await freePort(),
    SANDBOX_PORT: await freePort(),
    WORKER_HTTP_PORT: await freePort(),
    WORKER_SDK_METRICS_PORT: await freePort(),
    TEMPORAL_UI_PORT: await freePort(),
    EMBEDDED_PG_PORT: await freePort(),
    PIXFLOW_TEMPORAL_PORT: await freePort(),
  };
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-bench-'));
  chmodSync(dataDir, 0o755); // the embedded Postgres runs as its own user when we are root
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(Object.entries(ports).map(([k, v]) => [k, String(v)])),
    DATA_DIR: dataDir,
    API_KEYS: API_KEY,
    WEBHOOK_SECRET,
    WEBHOOK_PARTNER_ID,
    ...extraEnv,
  };
  // Each of these would mean "use an existing one" instead of starting it.
  for (const k of [
    'TEMPORAL_ADDRESS',
    'DATABASE_URL',
    'PROVIDER_BASE_URL',
    'PROVIDER_AUTH_URL',
    'PROVIDER_LIVENESS_URL',
  ])
    delete env[k];

  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/start.ts')],
    {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  const collect = (b: Buffer) => {
    out += b.toString('utf8');
    if (out.length > 200_000) out = out.slice(-100_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  const stop = async () => {
    if (child.exitCode === null) child.kill('SIGTERM');
    const code = await exited;
    rmSync(dataDir, { recursive: true, force: true });
    return code;
  };
  const deadline = Date.now() + timeoutMs;
  while (!out.includes('pixflow is up')) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the bench stack did not start:\n${out.slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  const workerPid = childPid(child.pid as number, path.join('worker', 'main.ts'));
  if (!workerPid) {
    await stop();
    throw new Error('worker process not found under scripts/start.ts');
  }
  const api = `http://127.0.0.1:${ports.API_PORT}`;
  return {
    env,
    api,
    sandbox: `http://127.0.0.1:${ports.SANDBOX_PORT}`,
    ingress: `${api}/webhooks/provider/${WEBHOOK_SECRET}`,
    temporalAddress: `127.0.0.1:${ports.PIXFLOW_TEMPORAL_PORT}`,
    databaseUrl: `postgresql://pixflow:pixflow@127.0.0.1:${ports.EMBEDDED_PG_PORT}/pixflow`,
    workerPid,
    output: () => out,
    stop,
  };
}
