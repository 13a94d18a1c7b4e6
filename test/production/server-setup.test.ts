import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { parse } from 'yaml';
import { parseStartOptions, StartOptionsError } from '../../scripts/start-options';
import { clientTlsOf, ensureTemporalCerts, TEMPORAL_TLS_SERVER_NAME } from '../../scripts/temporal-certs';
import {
  cliConnectionArgs,
  HISTORY_SHARDS,
  nexusDynamicConfig,
  postgresServerOf,
  serverConfig,
  temporalServerPorts,
  toYaml,
  writeServerConfig,
} from '../../scripts/temporal-server';
import {
  cachedServerIsCurrent,
  devServerDynamicConfigArgs,
  ensureTemporalCli,
  ensureTemporalServer,
  NEXUS_DYNAMIC_CONFIG,
  reportedServerToolVersion,
  TEMPORAL_SERVER_REPORTED_VERSION,
  VERSIONING_DYNAMIC_CONFIG,
} from '../../scripts/temporal-tools';

// What `npm start -- --temporal postgres` is made of, checked without starting it: the pinned
// server is the one the CLI embeds, the cached binaries are reused or built again by the version
// they report, and the server's configuration says what docs/production-temporal.md says.

describe('the Temporal server binaries', () => {
  it('are pinned to the server version the Temporal CLI embeds', () => {
    const cli = execFileSync(ensureTemporalCli(), ['--version'], { encoding: 'utf8' });
    expect(/Server (\S+?),/.exec(cli)?.[1]).toBe(TEMPORAL_SERVER_REPORTED_VERSION);
  });

  it('report that version, and the schema folders of every store are beside them', () => {
    const tools = ensureTemporalServer();
    expect(reportedServerToolVersion(tools.server)).toBe(TEMPORAL_SERVER_REPORTED_VERSION);
    expect(reportedServerToolVersion(tools.sqlTool)).toBe(TEMPORAL_SERVER_REPORTED_VERSION);
    for (const store of ['temporal', 'visibility']) {
      const versions = readdirSync(path.join(tools.schemaDir, store, 'versioned'));
      expect(versions, store).toContain('v1.0');
      expect(existsSync(path.join(tools.schemaDir, store, 'versioned', 'v1.0', 'manifest.json'))).toBe(true);
    }
  });

  it('in the cache are reused only when both report the pinned version', () => {
    const fake = (dir: string, name: string, reports: string) => {
      const file = path.join(dir, name);
      writeFileSync(file, `#!/bin/sh\necho "${name.replace('-server', '')} version ${reports}"\n`);
      chmodSync(file, 0o755);
    };
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    const root = mkdtempSync(path.join(os.tmpdir(), 'pixflow-server-'));
    const dir = (name: string) => mkdtempSync(path.join(root, name));
    try {
      const current = dir('current-');
      fake(current, 'temporal-server', TEMPORAL_SERVER_REPORTED_VERSION);
      fake(current, 'temporal-sql-tool', TEMPORAL_SERVER_REPORTED_VERSION);
      expect(cachedServerIsCurrent(current)).toBe(true);
      expect(stderr).not.toHaveBeenCalled();
      const stale = dir('stale-');
      fake(stale, 'temporal-server', TEMPORAL_SERVER_REPORTED_VERSION);
      fake(stale, 'temporal-sql-tool', '1.28.0');
      expect(cachedServerIsCurrent(stale)).toBe(false);
      expect(String(stderr.mock.calls[0]?.[0])).toContain('reports version 1.28.0');
      const half = dir('half-');
      fake(half, 'temporal-server', TEMPORAL_SERVER_REPORTED_VERSION);
      expect(cachedServerIsCurrent(half)).toBe(false);
    } finally {
      stderr.mockRestore();
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the server configuration', () => {
  const pg = postgresServerOf('postgresql://pix%40flow:s%3Acret@127.0.0.1:5433/pixflow');

  it('reads the Postgres server from DATABASE_URL, decoding user and password', () => {
    expect(pg).toEqual({ host: '127.0.0.1', port: 5433, user: 'pix@flow', password: 's:cret' });
  });

  it('is YAML the server reads: both stores on postgres12, every service on 127.0.0.1', async () => {
    const ports = await temporalServerPorts(45_000);
    const yaml = parse(toYaml(serverConfig(pg, ports, 'warn')));
    expect(yaml.persistence.numHistoryShards).toBe(HISTORY_SHARDS);
    const stores = yaml.persistence.datastores;
    expect(stores[yaml.persistence.defaultStore].sql).toMatchObject({
      pluginName: 'postgres12',
      databaseName: 'temporal',
      connectAddr: '127.0.0.1:5433',
      user: 'pix@flow',
      password: 's:cret',
    });
    expect(stores[yaml.persistence.visibilityStore].sql).toMatchObject({
      pluginName: 'postgres12',
      databaseName: 'temporal_visibility',
    });
    expect(Object.keys(yaml.services).sort()).toEqual(['frontend', 'history', 'matching', 'worker']);
    for (const service of Object.values(yaml.services) as Array<{ rpc: { bindOnIP: string } }>) {
      expect(service.rpc.bindOnIP).toBe('127.0.0.1');
    }
    expect(yaml.services.frontend.rpc.grpcPort).toBe(45_000);
  });

  it('turns Worker Versioning and Nexus on, with callbacks to its HTTP port, in a dynamic config file beside it', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-server-config-'));
    try {
      const ports = await temporalServerPorts(45_000);
      const args = writeServerConfig(dir, serverConfig(pg, ports, 'warn'));
      expect(args).toEqual(expect.arrayContaining(['--root', dir, '--env', 'pixflow', 'start']));
      const main = parse(readFileSync(path.join(dir, 'config', 'pixflow.yaml'), 'utf8'));
      const dynamic = parse(readFileSync(main.dynamicConfigClient.filepath, 'utf8'));
      const http = `127.0.0.1:${ports.frontendHttp}`;
      expect(dynamic).toEqual(
        Object.fromEntries(
          Object.entries({ ...VERSIONING_DYNAMIC_CONFIG, ...nexusDynamicConfig(http) }).map(([k, v]) => [
            k,
            [{ value: v }],
          ]),
        ),
      );
      expect(dynamic['system.enableDeploymentVersions']).toEqual([{ value: true }]);
      expect(dynamic['frontend.workerVersioningWorkflowAPIs']).toEqual([{ value: true }]);
      expect(dynamic['matching.wv.VersionDrainageStatusRefreshInterval']).toEqual([{ value: '10s' }]);
      expect(dynamic['system.enableNexus']).toEqual([{ value: true }]);
      expect(dynamic['component.nexusoperations.callback.endpoint.template']).toEqual([
        { value: `http://${http}/namespaces/{{.NamespaceName}}/nexus/callback` },
      ]);
      expect(dynamic['component.callbacks.allowedAddresses']).toEqual([
        { value: [{ Pattern: http, AllowInsecure: true }] },
      ]);
      expect(main.clusterMetadata.clusterInformation.active.httpAddress).toBe(http);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // The dev server npm start runs by default gets the same (it sets its callbacks itself).
    for (const [key, value] of Object.entries({ ...VERSIONING_DYNAMIC_CONFIG, ...NEXUS_DYNAMIC_CONFIG }))
      expect(devServerDynamicConfigArgs()).toContain(`${key}=${JSON.stringify(value)}`);
  });

  it('keeps every other port below 32768, all different: membership ports go to a SMALLINT column', async () => {
    const ports = await temporalServerPorts(45_000);
    const others = Object.entries(ports).filter(([name]) => name !== 'frontend');
    expect(others).toHaveLength(8);
    for (const [name, port] of others) expect(port, name).toBeLessThan(32_768);
    expect(new Set(Object.values(ports)).size).toBe(9);
  });
});

describe("the server's certificates (mutual TLS)", () => {
  const x509 = (file: string, ...what: string[]) =>
    execFileSync('openssl', ['x509', '-in', file, '-noout', ...what], { encoding: 'utf8' });

  it('are made once per folder: a private CA, the server for its names, the client; keys 0600, the CA key apart', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-certs-'));
    try {
      const files = ensureTemporalCerts(dir);
      for (const key of [files.ca.key, files.server.key, files.client.key])
        expect(statSync(key).mode & 0o777, key).toBe(0o600);
      for (const sub of ['ca', 'server', 'client'])
        expect(statSync(path.join(dir, sub)).mode & 0o777).toBe(0o700);
      // Each side's folder holds only its own key, and the CA certificate to check the other with.
      expect(readdirSync(path.join(dir, 'server')).sort()).toEqual(['ca.pem', 'server.key', 'server.pem']);
      expect(readdirSync(path.join(dir, 'client')).sort()).toEqual(['ca.pem', 'client.key', 'client.pem']);
      for (const cert of [files.server.cert, files.client.cert])
        expect(
          execFileSync('openssl', ['verify', '-CAfile', files.client.ca, cert], { encoding: 'utf8' }),
        ).toContain('OK');
      const server = x509(files.server.cert, '-ext', 'subjectAltName,extendedKeyUsage');
      expect(server).toMatch(/DNS:temporal, DNS:localhost, IP Address:127\.0\.0\.1/);
      expect(server).toMatch(/TLS Web Server Authentication, TLS Web Client Authentication/);
      expect(x509(files.client.cert, '-ext', 'extendedKeyUsage')).toMatch(/TLS Web Client Authentication/);
      // Kept at the next start: the same certificates.
      const serverBefore = readFileSync(files.server.cert, 'utf8');
      const clientBefore = readFileSync(files.client.cert, 'utf8');
      ensureTemporalCerts(dir);
      expect(readFileSync(files.server.cert, 'utf8')).toBe(serverBefore);
      expect(readFileSync(files.client.cert, 'utf8')).toBe(clientBefore);
      // A client certificate lost is made again, by the same CA; the server's stays.
      rmSync(files.client.cert);
      ensureTemporalCerts(dir);
      expect(readFileSync(files.server.cert, 'utf8')).toBe(serverBefore);
      expect(readFileSync(files.client.cert, 'utf8')).not.toBe(clientBefore);
      const verify = execFileSync('openssl', ['verify', '-CAfile', files.ca.cert, files.client.cert], {
        encoding: 'utf8',
      });
      expect(verify).toContain('OK');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('make the server require a client certificate of the CA on the frontend and between its services', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-certs-'));
    try {
      const files = ensureTemporalCerts(dir);
      const pg = postgresServerOf('postgresql://pixflow:pixflow@127.0.0.1:5433/pixflow');
      const yaml = parse(toYaml(serverConfig(pg, await temporalServerPorts(45_000), 'warn', files)));
      for (const group of ['frontend', 'internode']) {
        expect(yaml.global.tls[group].server, group).toEqual({
          certFile: files.server.cert,
          keyFile: files.server.key,
          requireClientAuth: true,
          clientCaFiles: [files.server.ca],
        });
        expect(yaml.global.tls[group].client, group).toEqual({
          serverName: TEMPORAL_TLS_SERVER_NAME,
          rootCaFiles: [files.server.ca],
        });
      }
      // Without certificates (the function's other callers), no TLS at all.
      expect(
        parse(toYaml(serverConfig(pg, await temporalServerPorts(45_000), 'warn'))).global.tls,
      ).toBeUndefined();
      // The CLI calls npm start makes carry the client's.
      const client = clientTlsOf(files);
      expect(cliConnectionArgs({ address: '127.0.0.1:7233', tls: client })).toEqual([
        '--address',
        '127.0.0.1:7233',
        '--tls-ca-path',
        client.ca,
        '--tls-cert-path',
        client.cert,
        '--tls-key-path',
        client.key,
        '--tls-server-name',
        'temporal',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('npm start options', () => {
  it('default to what npm start always ran: the dev server, one worker, one API', () => {
    expect(parseStartOptions([])).toEqual({ temporal: 'dev', workers: 1, apis: 1 });
  });

  it('read --temporal postgres --workers 2 --apis 3', () => {
    expect(parseStartOptions(['--temporal', 'postgres', '--workers', '2', '--apis=3'])).toEqual({
      temporal: 'postgres',
      workers: 2,
      apis: 3,
    });
  });

  it.each([
    [['--temporal', 'sqlite'], '--temporal must be dev or postgres'],
    [['--workers', '0'], '--workers must be 1 to 8'],
    [['--apis', 'two'], '--apis must be a number'],
    [['--replicas', '2'], "Unknown option '--replicas'"],
  ])('refuse %j, saying why and how to call it', (argv, why) => {
    expect(() => parseStartOptions(argv)).toThrow(StartOptionsError);
    expect(() => parseStartOptions(argv)).toThrow(why);
    expect(() => parseStartOptions(argv)).toThrow('usage: npm start');
  });
});
