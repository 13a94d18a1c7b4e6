import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { searchAttributeKeys } from '../common/search-attributes';
import { freePort } from './net';
import { TEMPORAL_TLS_SERVER_NAME, type TemporalClientTls, type TemporalTlsFiles } from './temporal-certs';
import { NEXUS_DYNAMIC_CONFIG, type TemporalServerTools, VERSIONING_DYNAMIC_CONFIG } from './temporal-tools';
import { waitUntil } from './wait';

// The Temporal server as production runs it, on this machine: every service (frontend,
// history, matching, worker) in one `temporal-server` process, its persistence and visibility
// stores in Postgres, schemas set up by `temporal-sql-tool`, every port on 127.0.0.1. `npm start
// -- --temporal postgres` and test/production use it; docs/production-temporal.md says why each
// choice was made.

/**
 * History shards: fixed when the cluster's databases are first used and never changed after
 * (another count needs new databases). Each shard has its own task queues polling Postgres;
 * 4 lets the one history host work on several workflows' updates at once on 2 cores without
 * the idle polling of hundreds. Temporal's own development-postgres12.yaml also uses 4.
 */
export const HISTORY_SHARDS = 4;
export const PERSISTENCE_DATABASE = 'temporal';
export const VISIBILITY_DATABASE = 'temporal_visibility';
/** Closed flows stay queryable in Temporal this long (the dev server keeps them a day). */
export const NAMESPACE_RETENTION = '72h';

/** Where Temporal's databases live: the Postgres server pixflow's DATABASE_URL names. */
export interface PostgresServer {
  host: string;
  port: number;
  user: string;
  password: string;
}

export function postgresServerOf(databaseUrl: string): PostgresServer {
  const u = new URL(databaseUrl);
  return {
    host: u.hostname,
    port: Number(u.port || 5432),
    user: decodeURIComponent(u.username),
    password: decodeURIComponent(u.password),
  };
}

export interface TemporalServerPorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  frontendMembership: number;
  historyMembership: number;
  matchingMembership: number;
  workerMembership: number;
}

/**
 * The frontend's gRPC port as given (what clients dial); every other port free and below
 * 32768: the server records each service's membership port in a SMALLINT column of Postgres,
 * which freePort keeps to.
 */
export async function temporalServerPorts(frontend: number): Promise<TemporalServerPorts> {
  const taken = new Set<number>([frontend]);
  const low = async () => {
    const port = await freePort(taken);
    taken.add(port);
    return port;
  };
  return {
    frontend,
    frontendHttp: await low(),
    history: await low(),
    matching: await low(),
    worker: await low(),
    frontendMembership: await low(),
    historyMembership: await low(),
    matchingMembership: await low(),
    workerMembership: await low(),
  };
}

type Scalar = string | number | boolean;
type Yaml = Scalar | Scalar[] | { [key: string]: Yaml };

/**
 * A small YAML writer for nested maps of scalars and lists of scalars; strings and lists are
 * written as JSON, which YAML reads.
 */
export function toYaml(value: { [key: string]: Yaml }, indent = ''): string {
  return Object.entries(value)
    .map(([key, v]) =>
      typeof v === 'object' && !Array.isArray(v)
        ? `${indent}${key}:\n${toYaml(v, `${indent}  `)}`
        : `${indent}${key}: ${typeof v === 'object' || typeof v === 'string' ? JSON.stringify(v) : String(v)}\n`,
    )
    .join('');
}

function sqlStore(pg: PostgresServer, databaseName: string, maxConns: number) {
  return {
    sql: {
      pluginName: 'postgres12',
      databaseName,
      connectAddr: `${pg.host}:${pg.port}`,
      connectProtocol: 'tcp',
      user: pg.user,
      password: pg.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  };
}

const rpc = (grpcPort: number, membershipPort: number, extra: Record<string, number> = {}) => ({
  rpc: { grpcPort, membershipPort, bindOnIP: '127.0.0.1', ...extra },
});

/**
 * Mutual TLS on every port the server opens (Temporal's global.tls): the frontend, which
 * pixflow's worker and API, the CLI and any other client dial, and the internode ports its
 * services dial each other on. Each requires a certificate of the private CA from the caller;
 * the services present the server's own (it is a client certificate too), also to the
 * frontend, for their system workflows and Nexus callbacks. Clients check the server's
 * certificate for TEMPORAL_TLS_SERVER_NAME.
 */
export function serverTls(files: TemporalTlsFiles) {
  const server = {
    certFile: files.server.cert,
    keyFile: files.server.key,
    requireClientAuth: true,
    clientCaFiles: [files.server.ca],
  };
  const client = { serverName: TEMPORAL_TLS_SERVER_NAME, rootCaFiles: [files.server.ca] };
  return { internode: { server, client }, frontend: { server, client } };
}

/**
 * The server's configuration (Temporal's config/ format). Each service opens its own
 * connections to each store, so the pools are small: 4 services x (10 + 4) stays far under the
 * embedded Postgres' 200 connections, with room for pixflow's own pools. No archival, no
 * metrics or pprof listener: only the ports the services need. With `tls`, every port requires
 * a client certificate of its CA (serverTls).
 */
export function serverConfig(
  pg: PostgresServer,
  ports: TemporalServerPorts,
  logLevel: string,
  tls?: TemporalTlsFiles,
) {
  const frontend = `127.0.0.1:${ports.frontend}`;
  const global: { [key: string]: Yaml } = {
    membership: { maxJoinDuration: '30s', broadcastAddress: '127.0.0.1' },
  };
  if (tls) global.tls = serverTls(tls);
  return {
    log: { stdout: true, level: logLevel },
    persistence: {
      defaultStore: 'postgres-default',
      visibilityStore: 'postgres-visibility',
      numHistoryShards: HISTORY_SHARDS,
      datastores: {
        'postgres-default': sqlStore(pg, PERSISTENCE_DATABASE, 10),
        'postgres-visibility': sqlStore(pg, VISIBILITY_DATABASE, 4),
      },
    },
    global,
    services: {
      frontend: rpc(ports.frontend, ports.frontendMembership, { httpPort: ports.frontendHttp }),
      history: rpc(ports.history, ports.historyMembership),
      matching: rpc(ports.matching, ports.matchingMembership),
      worker: rpc(ports.worker, ports.workerMembership),
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
          rpcAddress: frontend,
          httpAddress: `127.0.0.1:${ports.frontendHttp}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
  };
}

/**
 * Nexus as the dev server has it: when a flow behind an asynchronous operation ends, the server
 * calls the caller back at its frontend's HTTP address, the one address callbacks may go to
 * (server 1.29 needs both said; the dev server says them itself, for its own HTTP port).
 */
export function nexusDynamicConfig(frontendHttp: string) {
  return {
    ...NEXUS_DYNAMIC_CONFIG,
    'component.nexusoperations.callback.endpoint.template': `http://${frontendHttp}/namespaces/{{.NamespaceName}}/nexus/callback`,
    'component.callbacks.allowedAddresses': [{ Pattern: frontendHttp, AllowInsecure: true }],
  };
}

/** Dynamic config in the server's file format: each key's value (JSON, which YAML reads) for every namespace. */
export function dynamicConfigYaml(values: Record<string, unknown>): string {
  return Object.entries(values)
    .map(([key, value]) => `${key}:\n  - value: ${JSON.stringify(value)}\n`)
    .join('');
}

/**
 * Writes <dir>/config/pixflow.yaml (only its owner may read it: it holds the database
 * password) and the dynamic config beside it, and returns the server's command line: the server
 * reads <root>/<config>/<env>.yaml.
 */
export function writeServerConfig(dir: string, config: ReturnType<typeof serverConfig>): string[] {
  const configDir = path.join(dir, 'config');
  mkdirSync(configDir, { recursive: true });
  const header = '# Written by pixflow scripts/temporal-server.ts at every start; edits are lost.\n';
  const dynamicConfig = path.join(configDir, 'dynamicconfig.yaml');
  const { httpAddress } = config.clusterMetadata.clusterInformation.active;
  writeFileSync(
    dynamicConfig,
    header + dynamicConfigYaml({ ...VERSIONING_DYNAMIC_CONFIG, ...nexusDynamicConfig(httpAddress) }),
  );
  const withDynamic = { ...config, dynamicConfigClient: { filepath: dynamicConfig, pollInterval: '60s' } };
  writeFileSync(path.join(configDir, 'pixflow.yaml'), header + toYaml(withDynamic), { mode: 0o600 });
  // No authorizer, said outright (the server warns otherwise): every port is on 127.0.0.1, and
  // with TLS a client needs a certificate of the private CA to be served at all.
  return ['--allow-no-auth', '--root', dir, '--config', 'config', '--env', 'pixflow', 'start'];
}

/** Runs a tool to its end; its output comes back in the error when it fails. */
export function runTool(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(cmd, args, { env, timeout: 120_000, maxBuffer: 4 << 20 }, (err, stdout, stderr) => {
      if (err) {
        const output = `${stdout}${stderr}`.trim().split('\n').slice(-15).join('\n  ');
        reject(new Error(`${path.basename(cmd)} ${args.join(' ')} failed: ${err.message}\n  ${output}`));
      } else resolve(stdout);
    });
  });
}

/**
 * Both databases created and migrated to the schema version this server needs, as Temporal's
 * own setup does: create-database, setup-schema -v 0.0 (the version table), update-schema -d
 * <versioned folder> (every version newer than the recorded one). Each step is a no-op on a
 * database already set up, so this runs at every start.
 */
export async function setupTemporalDatabases(tools: TemporalServerTools, pg: PostgresServer) {
  // The password goes by environment, not on a command line `ps` shows.
  const env = { ...process.env, SQL_PASSWORD: pg.password };
  for (const [database, store] of [
    [PERSISTENCE_DATABASE, 'temporal'],
    [VISIBILITY_DATABASE, 'visibility'],
  ] as const) {
    const common = ['--plugin', 'postgres12', '--ep', pg.host, '-p', String(pg.port), '-u', pg.user];
    const withDb = [...common, '--db', database];
    await runTool(tools.sqlTool, [...common, '--db', database, 'create-database'], env).catch(
      (err: Error) => {
        if (!/already exists/.test(err.message)) throw err;
      },
    );
    await runTool(tools.sqlTool, [...withDb, 'setup-schema', '-v', '0.0'], env);
    await runTool(
      tools.sqlTool,
      [...withDb, 'update-schema', '-d', path.join(tools.schemaDir, store, 'versioned')],
      env,
    );
  }
}

/** Where the temporal CLI connects: an address, and the client certificate when the server requires one. */
export type TemporalCliTarget = string | { address: string; tls?: TemporalClientTls };

/** The CLI's connection options for `target`. */
export function cliConnectionArgs(target: TemporalCliTarget): string[] {
  if (typeof target === 'string') return ['--address', target];
  const { address, tls } = target;
  if (!tls) return ['--address', address];
  return [
    '--address',
    address,
    '--tls-ca-path',
    tls.ca,
    '--tls-cert-path',
    tls.cert,
    '--tls-key-path',
    tls.key,
    '--tls-server-name',
    tls.serverName,
  ];
}

/** `temporal operator cluster health` says SERVING: every service has joined. */
export async function serverServing(cli: string, target: TemporalCliTarget): Promise<boolean> {
  const out = await runTool(cli, [
    'operator',
    'cluster',
    'health',
    ...cliConnectionArgs(target),
    '--command-timeout',
    '5s',
  ]).catch(() => '');
  return /(^|[^_])SERVING/.test(out);
}

/**
 * The namespace and pixflow's search attributes, each created only if missing (the server
 * logs a warning for an attribute created twice), then waited on until a visibility query
 * that names them is accepted: the frontend reads them from its namespace cache, which
 * refreshes every few seconds, and a flow started before then would be refused.
 */
export async function prepareNamespace(cli: string, target: TemporalCliTarget, namespace: string) {
  const at = [...cliConnectionArgs(target), '--namespace', namespace];
  const described = await runTool(cli, ['operator', 'namespace', 'describe', ...at]).catch(() => undefined);
  if (!described) {
    await runTool(cli, ['operator', 'namespace', 'create', ...at, '--retention', NAMESPACE_RETENTION]);
  }
  // The namespace may be a moment away from every service's cache.
  const listed = await waitUntil(
    () => runTool(cli, ['operator', 'search-attribute', 'list', ...at, '-o', 'json']).catch(() => ''),
    (out) => out !== '',
    { timeoutMs: 30_000, intervalMs: 500 },
  );
  const cliType: Record<string, string> = { KEYWORD: 'Keyword', INT: 'Int' };
  // One per call: given several names at once, this server adds only the first to a SQL store.
  for (const k of searchAttributeKeys.filter((key) => !listed.includes(`"${key.name}"`))) {
    const type = cliType[k.type] ?? k.type;
    await runTool(cli, ['operator', 'search-attribute', 'create', ...at, '--name', k.name, '--type', type]);
  }
  const query = searchAttributeKeys.map((k) => `${k.name} IS NULL`).join(' AND ');
  await waitUntil(
    () =>
      runTool(cli, ['workflow', 'list', ...at, '--query', query, '--limit', '1']).then(
        () => '',
        (err: Error) => err.message,
      ),
    (failure) => failure === '',
    {
      timeoutMs: 60_000,
      intervalMs: 500,
      onTimeout: (failure) =>
        new Error(`the search attributes never became usable in namespace ${namespace}: ${failure}`),
    },
  );
}
