// Over 400 lines on purpose: everything that builds, finds and checks the Temporal binaries (CLI,
// server, SQL tool, test server) at one pinned version, so a version bump is one file's change.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';

// Finds or builds the Temporal servers pixflow runs without any download from outside the
// package registries: the CLI dev server and the production server with its SQL tool (Go module
// proxy), and the Java time-skipping test server (Maven Central); and the tests' API fuzzer
// (PyPI). All land in the git-ignored cache folder and are reused.

export const ROOT = path.resolve(__dirname, '..');
export const CACHE_DIR = process.env.PIXFLOW_CACHE_DIR ?? path.join(ROOT, '.cache', 'temporal');
export const TEMPORAL_CLI_VERSION = 'v1.5.1';
const CLI_MODULE = `github.com/temporalio/cli/cmd/temporal@${TEMPORAL_CLI_VERSION}`;
/**
 * The CLI's release builds set its version at link time; `go install` alone leaves the source's
 * placeholder, 0.0.0-DEV. This is the variable and the value (no `v`) their release config sets.
 */
const CLI_VERSION_VARIABLE = 'github.com/temporalio/cli/temporalcli.Version';
export const TEMPORAL_CLI_REPORTED_VERSION = TEMPORAL_CLI_VERSION.replace(/^v/, '');
const TEST_SERVER_DIR = path.join(CACHE_DIR, 'test-server');
export const TEST_SERVER_WRAPPER = path.join(TEST_SERVER_DIR, 'temporal-test-server');

const log = (msg: string) => process.stderr.write(`[setup] ${msg}\n`);

class SetupError extends Error {}

function onPath(cmd: string): string | undefined {
  const r = spawnSync('sh', ['-c', `command -v ${cmd}`], { encoding: 'utf8' });
  const found = r.stdout.trim();
  return r.status === 0 && found ? found : undefined;
}

/**
 * Dynamic config for the dev server, which has a single history shard. By default its history
 * service loads new transfer tasks (each new workflow task, activity task and signal's workflow
 * task) at most 20 times a second per shard: a bound sized for clusters of hundreds of shards.
 * On one shard a new task can wait up to 1/20 s before a worker may take it, on every step of
 * every flow. A cluster keeps its own settings.
 */
/**
 * Worker Versioning, which every pixflow worker uses (docs/versioning.md): on by default in
 * server 1.29, said here because pixflow cannot run without it. A version that no longer takes
 * new flows is first checked for open pinned flows after the grace period, then every refresh
 * interval, until it is drained. The server's 3 minutes each allow for Elasticsearch's refresh
 * lag; these servers keep visibility in SQL, written a moment after each change, so an operator
 * learns within half a minute that an old build's workers may stop.
 */
export const VERSIONING_DYNAMIC_CONFIG = {
  'system.enableDeploymentVersions': true,
  'frontend.workerVersioningWorkflowAPIs': true,
  'matching.wv.VersionDrainageStatusVisibilityGracePeriod': '20s',
  'matching.wv.VersionDrainageStatusRefreshInterval': '10s',
} as const;

/**
 * Nexus, which pixflow's Nexus service needs (docs/nexus.md): on by default in server 1.29, said
 * here as Worker Versioning is. The dev server also sends the callbacks of asynchronous operations
 * to its own HTTP port and allows that address; the server on Postgres is told so
 * (temporal-server.ts).
 */
export const NEXUS_DYNAMIC_CONFIG = { 'system.enableNexus': true } as const;

export const DEV_SERVER_DYNAMIC_CONFIG = {
  'history.transferProcessorMaxPollRPS': 200,
  ...VERSIONING_DYNAMIC_CONFIG,
  ...NEXUS_DYNAMIC_CONFIG,
} as const;

/** `temporal server start-dev --dynamic-config-value KEY=VALUE` arguments for it. */
export function devServerDynamicConfigArgs(): string[] {
  return Object.entries(DEV_SERVER_DYNAMIC_CONFIG).flatMap(([key, value]) => [
    '--dynamic-config-value',
    `${key}=${JSON.stringify(value)}`,
  ]);
}

/** TEMPORAL_CLI, then `temporal` on PATH, then the cache folder; otherwise build it with Go. */
export function findTemporalCli(): string | undefined {
  const fromEnv = process.env.TEMPORAL_CLI;
  if (fromEnv) {
    if (!existsSync(fromEnv)) throw new SetupError(`TEMPORAL_CLI=${fromEnv} does not exist`);
    return fromEnv;
  }
  const cached = path.join(CACHE_DIR, 'bin', 'temporal');
  return onPath('temporal') ?? (cachedCliIsCurrent(cached) ? cached : undefined);
}

/**
 * A binary in the cache folder is reused only if it reports the pinned version: one built before
 * the version was stamped in (0.0.0-DEV), or for another pin, is built again.
 */
export function cachedCliIsCurrent(cli: string): boolean {
  return binaryIsCurrent(cli, reportedCliVersion, TEMPORAL_CLI_REPORTED_VERSION);
}

/** Whether a cached binary exists and reports `want`; says why it is built again when not. */
function binaryIsCurrent(file: string, reportedOf: (f: string) => string | undefined, want: string): boolean {
  if (!existsSync(file)) return false;
  const reported = reportedOf(file);
  if (reported === want) return true;
  log(`${file} reports version ${reported ?? 'unknown'}, not ${want}: building it again`);
  return false;
}

/** The version `temporal --version` reports ("temporal version 1.5.1 (Server ..., UI ...)"). */
export function reportedCliVersion(cli: string): string | undefined {
  const r = spawnSync(cli, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? /^temporal version (\S+)/.exec(r.stdout)?.[1] : undefined;
}

export function ensureTemporalCli(): string {
  const found = findTemporalCli();
  if (found) return found;
  const go = needGo('the Temporal CLI', ' or set TEMPORAL_CLI to a temporal binary');
  const bin = path.join(CACHE_DIR, 'bin');
  mkdirSync(bin, { recursive: true });
  log(`building the Temporal CLI ${TEMPORAL_CLI_VERSION} with go install (a few minutes the first time)...`);
  const started = Date.now();
  const ldflags = `-X ${CLI_VERSION_VARIABLE}=${TEMPORAL_CLI_REPORTED_VERSION}`;
  const r = spawnSync(go, ['install', `-ldflags=${ldflags}`, CLI_MODULE], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, GOBIN: bin, CGO_ENABLED: '0' },
  });
  if (r.status !== 0) throw new SetupError(`go install ${CLI_MODULE} failed (exit ${r.status})`);
  log(`Temporal CLI built in ${Math.round((Date.now() - started) / 1000)} s: ${path.join(bin, 'temporal')}`);
  return path.join(bin, 'temporal');
}

/**
 * The Temporal server the CLI embeds, as its own binaries: `temporal-server` (every service in
 * one process, on Postgres) and `temporal-sql-tool` (creates and migrates its databases). The
 * pin is the CLI's: cli v1.5.1's go.mod requires go.temporal.io/server v1.29.1, and its
 * `--version` says "Server 1.29.1", so both servers behave alike.
 */
export const TEMPORAL_SERVER_VERSION = 'v1.29.1';
export const TEMPORAL_SERVER_REPORTED_VERSION = TEMPORAL_SERVER_VERSION.replace(/^v/, '');
const SERVER_MODULE = 'go.temporal.io/server';
/** What `go install` names each package's binary, and the name it gets in the cache folder. */
const SERVER_BINARIES = [
  { pkg: 'cmd/server', built: 'server', name: 'temporal-server' },
  { pkg: 'cmd/tools/sql', built: 'sql', name: 'temporal-sql-tool' },
] as const;
/** The Postgres schemas of the pinned server, copied from its module source (`go list -m`). */
export const SERVER_SCHEMA_DIR = path.join(
  CACHE_DIR,
  `schema-${TEMPORAL_SERVER_VERSION}`,
  'postgresql',
  'v12',
);

export interface TemporalServerTools {
  server: string;
  sqlTool: string;
  /** Holds temporal/versioned and visibility/versioned, one folder per schema version. */
  schemaDir: string;
}

/** The version a server binary reports: "temporal version 1.29.1", "temporal-sql-tool version 1.29.1". */
export function reportedServerToolVersion(bin: string): string | undefined {
  if (!existsSync(bin)) return undefined;
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? /^temporal(?:-sql-tool)? version (\S+)/.exec(r.stdout)?.[1] : undefined;
}

/** Both cached binaries report the pin; anything else (missing, another version) is built again. */
export function cachedServerIsCurrent(bin = path.join(CACHE_DIR, 'bin')): boolean {
  return SERVER_BINARIES.every((b) =>
    binaryIsCurrent(path.join(bin, b.name), reportedServerToolVersion, TEMPORAL_SERVER_REPORTED_VERSION),
  );
}

function needGo(what: string, orElse = ''): string {
  const go = onPath('go');
  if (!go) {
    throw new SetupError(
      `Go is needed once to build ${what}: install Go 1.25+ (https://go.dev/doc/install, or \`apt-get install golang\`)${orElse}`,
    );
  }
  return go;
}

/**
 * `go install` of both packages at the pin, from the Go module proxy (the module has no replace
 * directives, so `pkg@version` builds it as released). Built into a folder of its own, then
 * renamed: `server` and `sql` alone say nothing in bin/.
 */
function buildTemporalServer(go: string, bin: string) {
  mkdirSync(CACHE_DIR, { recursive: true });
  const staging = mkdtempSync(path.join(CACHE_DIR, 'server-build-'));
  try {
    log(
      `building temporal-server and temporal-sql-tool ${TEMPORAL_SERVER_VERSION} with go install (minutes the first time)...`,
    );
    const started = Date.now();
    const pkgs = SERVER_BINARIES.map((b) => `${SERVER_MODULE}/${b.pkg}@${TEMPORAL_SERVER_VERSION}`);
    const r = spawnSync(go, ['install', ...pkgs], {
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, GOBIN: staging, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
    });
    if (r.status !== 0) throw new SetupError(`go install ${pkgs.join(' ')} failed (exit ${r.status})`);
    mkdirSync(bin, { recursive: true });
    for (const b of SERVER_BINARIES) renameSync(path.join(staging, b.built), path.join(bin, b.name));
    log(`Temporal server built in ${Math.round((Date.now() - started) / 1000)} s: ${bin}`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Copies the Postgres schema folders out of the module source in the Go module cache, which
 * `go install` filled: the server then starts without Go, and a cleaned module cache does not
 * take them away. The cache's files are read-only; the copies are made writable so the cache
 * folder can be deleted.
 */
function copyServerSchemas(go: string) {
  const marker = path.join(SERVER_SCHEMA_DIR, '.complete');
  if (existsSync(marker)) return;
  const r = spawnSync(go, ['list', '-m', '-json', `${SERVER_MODULE}@${TEMPORAL_SERVER_VERSION}`], {
    encoding: 'utf8',
    cwd: os.tmpdir(),
    env: { ...process.env, GOFLAGS: '-mod=mod' },
  });
  const dir = r.status === 0 ? (JSON.parse(r.stdout) as { Dir?: string }).Dir : undefined;
  const source = dir && path.join(dir, 'schema', 'postgresql', 'v12');
  if (!source || !existsSync(source)) {
    throw new SetupError(
      `the ${SERVER_MODULE}@${TEMPORAL_SERVER_VERSION} source has no Postgres schemas (go list -m: exit ${r.status})`,
    );
  }
  rmSync(SERVER_SCHEMA_DIR, { recursive: true, force: true });
  for (const store of ['temporal', 'visibility']) {
    const to = path.join(SERVER_SCHEMA_DIR, store, 'versioned');
    cpSync(path.join(source, store, 'versioned'), to, { recursive: true });
    makeWritable(to);
  }
  writeFileSync(marker, `${source}\n`);
}

function makeWritable(dir: string) {
  chmodSync(dir, 0o755);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) makeWritable(p);
    else chmodSync(p, 0o644);
  }
}

/** The cached server binaries and schemas, built and copied first if missing or of another version. */
export function ensureTemporalServer(): TemporalServerTools {
  const bin = path.join(CACHE_DIR, 'bin');
  const tools = {
    server: path.join(bin, 'temporal-server'),
    sqlTool: path.join(bin, 'temporal-sql-tool'),
    schemaDir: SERVER_SCHEMA_DIR,
  };
  const current = cachedServerIsCurrent(bin);
  if (current && existsSync(path.join(SERVER_SCHEMA_DIR, '.complete'))) return tools;
  const go = needGo('the Temporal server');
  if (!current) buildTemporalServer(go, bin);
  copyServerSchemas(go);
  return tools;
}

/** The jar list in a fixed order: class-data sharing needs the same explicit class path every time. */
function testServerClassPath(): string {
  const lib = path.join(TEST_SERVER_DIR, 'lib');
  return readdirSync(lib)
    .filter((f) => f.endsWith('.jar'))
    .sort()
    .map((f) => path.join(lib, f))
    .join(':');
}

const JVM_FLAGS = [
  // The test server is small and short-lived: C1 only and a serial GC start fastest on 2 cores.
  '-XX:TieredStopAtLevel=1',
  '-XX:+UseSerialGC',
  '-Xss512k',
  '-Xms64m',
  '-XX:-UsePerfData',
];

export function ensureTestServer(): string {
  const lib = path.join(TEST_SERVER_DIR, 'lib');
  const jsa = path.join(TEST_SERVER_DIR, 'test-server.jsa');
  if (existsSync(TEST_SERVER_WRAPPER) && existsSync(jsa)) return TEST_SERVER_WRAPPER;
  const java = onPath('java');
  const mvn = onPath('mvn');
  if (!java || !mvn) {
    throw new SetupError(
      'Java 17+ and Maven are needed once to fetch the Temporal test server: install them (`apt-get install openjdk-17-jdk-headless maven`)',
    );
  }
  if (!existsSync(lib) || readdirSync(lib).length === 0) {
    log('fetching io.temporal:temporal-test-server and its dependencies from Maven Central...');
    rmSync(lib, { recursive: true, force: true });
    const r = spawnSync(
      mvn,
      [
        '-B',
        '-q',
        '-f',
        path.join(ROOT, 'scripts', 'temporal-test-server', 'pom.xml'),
        'dependency:copy-dependencies',
        `-DoutputDirectory=${lib}`,
        '-DincludeScope=runtime',
      ],
      { stdio: ['ignore', 'inherit', 'inherit'] },
    );
    if (r.status !== 0) throw new SetupError(`mvn dependency:copy-dependencies failed (exit ${r.status})`);
  }
  const cp = testServerClassPath();
  // A class-data-sharing archive made once here cuts JVM start-up well under the SDK's 5 s limit.
  log('making a class-data-sharing archive for the test server...');
  const dump = spawnSync(
    'sh',
    [
      '-c',
      `"${java}" ${JVM_FLAGS.join(' ')} -XX:ArchiveClassesAtExit="${jsa}" -cp "${cp}" io.temporal.testserver.TestServer 0 & pid=$!; sleep 4; kill $pid; wait $pid`,
    ],
    { stdio: 'ignore' },
  );
  if (dump.error || !existsSync(jsa))
    log('class-data-sharing archive not made; the server starts without it');
  // The SDK passes the port as the first argument and stops only its direct child, so: exec.
  const cds = existsSync(jsa) ? `-XX:SharedArchiveFile="${jsa}" -Xshare:auto` : '';
  writeFileSync(
    TEST_SERVER_WRAPPER,
    `#!/bin/sh\n# Made by scripts/temporal-tools.ts. Usage: temporal-test-server <port>\nexec "${java}" ${JVM_FLAGS.join(' ')} ${cds} -cp "${cp}" io.temporal.testserver.TestServer "$@"\n`,
  );
  chmodSync(TEST_SERVER_WRAPPER, 0o755);
  log(`time-skipping test server ready: ${TEST_SERVER_WRAPPER}`);
  return TEST_SERVER_WRAPPER;
}

/**
 * Schemathesis, the OpenAPI-driven fuzzer the tests run against /openapi.json: a pinned version
 * from PyPI in a venv of its own under the cache folder (a new pin gets a new venv).
 */
export const SCHEMATHESIS_VERSION = '4.32.5';
export const SCHEMATHESIS_VENV = path.join(ROOT, '.cache', `schemathesis-${SCHEMATHESIS_VERSION}`);
export const SCHEMATHESIS_BIN = path.join(SCHEMATHESIS_VENV, 'bin', 'st');

/** A venv is not relocatable: one copied or moved keeps scripts that point at its old path. */
function schemathesisRuns(): boolean {
  if (!existsSync(SCHEMATHESIS_BIN)) return false;
  const r = spawnSync(SCHEMATHESIS_BIN, ['--version'], { encoding: 'utf8' });
  return r.status === 0 && r.stdout.includes(SCHEMATHESIS_VERSION);
}

export function ensureSchemathesis(): string {
  if (schemathesisRuns()) return SCHEMATHESIS_BIN;
  const python = onPath('python3');
  const venvMissing =
    'Python 3.9+ with venv is needed once to install the API fuzzer (schemathesis): `apt-get install python3-venv`';
  if (!python) throw new SetupError(venvMissing);
  log(
    `installing schemathesis ${SCHEMATHESIS_VERSION} from PyPI into ${SCHEMATHESIS_VENV} (first run only)...`,
  );
  rmSync(SCHEMATHESIS_VENV, { recursive: true, force: true });
  const venv = spawnSync(python, ['-m', 'venv', SCHEMATHESIS_VENV], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (venv.status !== 0) throw new SetupError(`${venvMissing} (python3 -m venv exited ${venv.status})`);
  const pip = spawnSync(
    path.join(SCHEMATHESIS_VENV, 'bin', 'pip'),
    ['install', '--quiet', '--disable-pip-version-check', `schemathesis==${SCHEMATHESIS_VERSION}`],
    { stdio: ['ignore', 'inherit', 'inherit'] },
  );
  if (pip.status !== 0 || !schemathesisRuns()) {
    rmSync(SCHEMATHESIS_VENV, { recursive: true, force: true });
    throw new SetupError(`pip install schemathesis==${SCHEMATHESIS_VERSION} failed (exit ${pip.status})`);
  }
  return SCHEMATHESIS_BIN;
}

export function temporalCliVersion(cli: string): string {
  return execFileSync(cli, ['--version'], { encoding: 'utf8' }).trim();
}

/** Runs `fn`; a SetupError prints one clear line and exits 1. */
export function runSetupStep<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof SetupError) {
      process.stderr.write(`pixflow setup: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
}
