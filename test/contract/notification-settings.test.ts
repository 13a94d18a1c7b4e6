import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';

// The sandbox process (sandbox/main.ts) sends its notifications where its own settings say, from
// its start: no one has to POST /sandbox/notifications after both it and the API are up (the
// compose file's sandbox relies on it).

const ROOT = path.resolve(__dirname, '../..');
const children: ChildProcess[] = [];

afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

function startSandboxProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'sandbox/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  children.push(child);
  let stderr = '';
  child.stderr?.on('data', (b: Buffer) => {
    stderr += b.toString('utf8');
  });
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return { exited, stderr: () => stderr };
}

const targetsAt = async (url: string) =>
  ((await (await fetch(`${url}/sandbox/state`)).json()) as { targets: Record<string, unknown> }).targets;

describe('the sandbox: notification targets from its settings', () => {
  it('sends every point to SANDBOX_NOTIFICATION_URL with WEBHOOK_PARTNER_ID from its start, and after a reset', async () => {
    const port = await freePort();
    const ingress = 'http://127.0.0.1:3999/webhooks/provider/some-secret';
    startSandboxProcess({
      SANDBOX_PORT: String(port),
      SANDBOX_NOTIFICATION_URL: ingress,
      WEBHOOK_PARTNER_ID: 'partner-from-settings',
    });
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(
      () =>
        fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      (ok) => ok,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const target = { url: ingress, partnerId: 'partner-from-settings' };
    const all = { deposit: target, withdraw: target, liveness: target };
    expect(await targetsAt(url)).toEqual(all);
    // Changed while it runs, then reset: back to its settings, not to nothing.
    await fetch(`${url}/sandbox/notifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ url: 'http://127.0.0.1:3998/other', partnerId: 'x', points: ['deposit'] }),
    });
    expect(((await targetsAt(url)).deposit as { url: string }).url).toBe('http://127.0.0.1:3998/other');
    expect((await fetch(`${url}/sandbox/reset`, { method: 'POST' })).status).toBe(200);
    expect(await targetsAt(url)).toEqual(all);
  });

  it('starts with no target when the setting is unset', async () => {
    const port = await freePort();
    startSandboxProcess({ SANDBOX_PORT: String(port) });
    const url = `http://127.0.0.1:${port}`;
    await waitUntil(
      () =>
        fetch(`${url}/healthz`).then(
          (r) => r.ok,
          () => false,
        ),
      (ok) => ok,
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(await targetsAt(url)).toEqual({});
  });

  it('refuses to start on a setting that is not an http(s) URL, naming it', async () => {
    const sandbox = startSandboxProcess({
      SANDBOX_PORT: String(await freePort()),
      SANDBOX_NOTIFICATION_URL: 'api:3000/webhooks',
    });
    expect(await sandbox.exited).toBe(1);
    expect(sandbox.stderr()).toMatch(/SANDBOX_NOTIFICATION_URL/);
  });
});
