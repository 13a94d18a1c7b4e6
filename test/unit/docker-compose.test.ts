import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { z } from 'zod';
import { envSchema } from '../../common/config';
import { PROVIDER_SECRETS, SECRET_VARIABLES, SECRETS_READ_BY } from '../../common/production-secrets';
import { searchAttributeKeys } from '../../common/search-attributes';
import { NODE_RUNTIME_FLAGS, temporalRuntimeEnv } from '../../scripts/runtime-tuning';
import { HISTORY_SHARDS, PERSISTENCE_DATABASE, VISIBILITY_DATABASE } from '../../scripts/temporal-server';
import { TEMPORAL_SERVER_REPORTED_VERSION } from '../../scripts/temporal-tools';

// No Docker engine runs here, so the compose file is checked by its structure.
const service = z.looseObject({
  image: z.string().optional(),
  build: z.unknown().optional(),
  command: z.unknown().optional(),
  ports: z.array(z.string()).optional(),
  environment: z.record(z.string(), z.union([z.string(), z.number()])).optional(),
  depends_on: z.record(z.string(), z.object({ condition: z.string() })).optional(),
  healthcheck: z.object({ test: z.array(z.string()) }).optional(),
  deploy: z.object({ replicas: z.number().int() }).optional(),
  restart: z.string().optional(),
  entrypoint: z.array(z.string()).optional(),
});
const compose = z.object({ services: z.record(z.string(), service) });

/** Commands busybox provides in the Alpine base (alpine:3.22) of both Temporal images. */
const BUSYBOX = ['sh', 'grep', 'sleep', 'echo', 'wget'];

/**
 * What each Temporal image holds on its PATH, as the build of 1.29.1 makes it: temporalio/docker-builds,
 * branch release/v1.29.x, commit b9a3ead (its temporal submodule is v1.29.1): server.Dockerfile
 * copies tctl, tctl-authorization-plugin, temporal-server and temporal into /usr/local/bin over
 * docker/base-images/base-server.Dockerfile (Alpine with bash, curl, dockerize);
 * admin-tools.Dockerfile copies tctl, tctl-authorization-plugin, temporal,
 * temporal-cassandra-tool, temporal-sql-tool and tdbg over base-admin-tools.Dockerfile (Alpine
 * with bash, curl, jq, yq, the Postgres and MySQL clients).
 */
const IMAGE_COMMANDS: Record<string, string[]> = {
  [`temporalio/server:${TEMPORAL_SERVER_REPORTED_VERSION}`]: [
    'tctl',
    'tctl-authorization-plugin',
    'temporal-server',
    'temporal',
    'bash',
    'curl',
    'dockerize',
    ...BUSYBOX,
  ],
  [`temporalio/admin-tools:${TEMPORAL_SERVER_REPORTED_VERSION}`]: [
    'tctl',
    'tctl-authorization-plugin',
    'temporal',
    'temporal-cassandra-tool',
    'temporal-sql-tool',
    'tdbg',
    'bash',
    'curl',
    'jq',
    'yq',
    'psql',
    'mysql',
    ...BUSYBOX,
  ],
};

/** Shell words that are no command to look up on PATH. */
const SHELL_WORDS = new Set(['for', 'in', 'do', 'done', 'until', 'while', 'if', 'then', 'else', 'fi', '!']);

/** The commands a shell text runs: the first word of each pipeline stage, past the shell's own words. */
function commandsOf(script: string): string[] {
  const found: string[] = [];
  for (const stage of script.split(/;|&&|\|\||\||\n/)) {
    const words = stage.trim().split(/\s+/).filter(Boolean);
    while (words.length && SHELL_WORDS.has(words[0]!)) words.shift();
    const [first] = words;
    // `set -e` is the shell's own builtin.
    if (first === 'set') continue;
    // An assignment (db="..."), a redirection or the rest of `for x in a b` is not a command.
    if (first && !first.includes('=') && !/^[<>&\d]/.test(first) && !stage.trim().startsWith('for '))
      found.push(first);
  }
  return found;
}

const composeText = readFileSync(path.join(__dirname, '../../docker-compose.yml'), 'utf8');
const file = parse(composeText, { merge: true });
const { services } = compose.parse(file);

describe('docker-compose.yml', () => {
  it('has the production-shaped topology', () => {
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'sandbox', 'worker', 'api']) {
      expect(services, name).toHaveProperty(name);
    }
    expect(services['temporal-ui']?.image).toMatch(/^temporalio\/ui:/);
    expect(services.postgres?.image).toMatch(/^postgres:1[4-9]/);
  });

  it('runs the plain Temporal server at the version npm start builds, not the auto-setup image', () => {
    expect(services.temporal?.image).toBe(`temporalio/server:${TEMPORAL_SERVER_REPORTED_VERSION}`);
    for (const name of ['temporal-schema', 'temporal-setup']) {
      expect(services[name]?.image, name).toBe(`temporalio/admin-tools:${TEMPORAL_SERVER_REPORTED_VERSION}`);
    }
    for (const [name, s] of Object.entries(services)) expect(s.image ?? '', name).not.toContain('auto-setup');
  });

  it('sets up both Temporal databases with temporal-sql-tool before the server starts', () => {
    const schema = services['temporal-schema'];
    expect(schema?.environment?.SQL_PLUGIN).toBe('postgres12');
    expect(schema?.environment?.SQL_HOST).toBe('postgres');
    expect(schema?.depends_on?.postgres?.condition).toBe('service_healthy');
    const script = JSON.stringify(schema?.command);
    for (const step of ['create-database', 'setup-schema -v 0.0', 'update-schema -d']) {
      expect(script).toContain(step);
    }
    for (const db of [PERSISTENCE_DATABASE, VISIBILITY_DATABASE]) expect(script).toContain(db);
    for (const dir of ['postgresql/v12/', '/versioned']) expect(script).toContain(dir);
    expect(services.temporal?.depends_on?.['temporal-schema']?.condition).toBe(
      'service_completed_successfully',
    );
  });

  it('runs temporal on the postgres service, with the databases and shards npm start uses', () => {
    const env = services.temporal?.environment ?? {};
    expect(env.POSTGRES_SEEDS).toBe('postgres');
    expect(env.DB).toBe('postgres12');
    expect(env.DBNAME).toBe(PERSISTENCE_DATABASE);
    expect(env.VISIBILITY_DBNAME).toBe(VISIBILITY_DATABASE);
    expect(Number(env.NUM_HISTORY_SHARDS)).toBe(HISTORY_SHARDS);
    expect(services.temporal?.depends_on?.postgres?.condition).toBe('service_healthy');
  });

  it('runs Temporal and the Node services, in images and by npm script, with the garbage collection npm start gives them', () => {
    const env = services.temporal?.environment ?? {};
    const tuned = temporalRuntimeEnv({});
    expect(String(env.GOGC)).toBe(tuned.GOGC);
    expect(String(env.GOMEMLIMIT)).toBe(tuned.GOMEMLIMIT);
    // The worker, API and sandbox images: one Dockerfile, whose NODE_OPTIONS every command gets.
    const dockerfile = readFileSync(path.join(__dirname, '../../Dockerfile'), 'utf8');
    expect(dockerfile).toContain(`ENV NODE_OPTIONS=${NODE_RUNTIME_FLAGS.join(' ')}\n`);
    for (const name of ['worker', 'api', 'sandbox']) expect(services[name]?.build, name).toBe('.');
    // Run by hand, outside npm start and the image, they get the same flags.
    const { scripts } = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    for (const name of ['worker', 'api', 'sandbox']) {
      expect(scripts[name], name).toBe(
        `exec node ${NODE_RUNTIME_FLAGS.join(' ')} --import tsx ${name}/main.ts`,
      );
    }
  });

  it('runs two worker replicas, each started again when it dies', () => {
    expect(services.worker?.deploy?.replicas).toBe(2);
    for (const name of ['worker', 'api', 'temporal'])
      expect(services[name]?.restart, name).toBe('unless-stopped');
  });

  it('runs the workers as one build of the pixflow Worker Deployment, named by the image unless set', () => {
    const env = services.worker?.environment ?? {};
    expect(env.WORKER_DEPLOYMENT_NAME).toBe('pixflow');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's ${NAME:-default}, unset by default
    expect(env.WORKER_BUILD_ID).toBe('${PIXFLOW_BUILD_ID:-}');
    // Settings the worker reads; the API starts no workflow task and needs neither.
    for (const name of ['WORKER_DEPLOYMENT_NAME', 'WORKER_BUILD_ID']) {
      expect(envSchema.shape, name).toHaveProperty(name);
      expect(services.api?.environment ?? {}, name).not.toHaveProperty(name);
    }
    // The image has no git: the worker names its build by its workflow code.
    expect(readFileSync(path.join(__dirname, '../../.dockerignore'), 'utf8')).toMatch(/^\.git$/m);
  });

  it("applies pixflow's migrations, to the database they use, before the API and the workers start", () => {
    expect(services.migrate?.build).toBe('.');
    expect(services.migrate?.depends_on?.postgres?.condition).toBe('service_healthy');
    for (const name of ['worker', 'api']) {
      expect(services[name]?.depends_on?.migrate?.condition, name).toBe('service_completed_successfully');
      expect(services.migrate?.environment?.DATABASE_URL, name).toBe(
        services[name]?.environment?.DATABASE_URL,
      );
    }
  });

  it('publishes the documented ports', () => {
    // The host port: `[address:]host:container`.
    const published = (name: string) => (services[name]?.ports ?? []).map((p) => p.split(':').at(-2));
    expect(published('api')).toContain('3000');
    expect(published('sandbox')).toContain('4010');
    expect(published('temporal')).toContain('7233');
    expect(published('temporal-ui')).toContain('8233');
  });

  it('points worker and api at the temporal and postgres services', () => {
    for (const name of ['worker', 'api']) {
      const env = services[name]?.environment ?? {};
      expect(env.TEMPORAL_ADDRESS, name).toBe('temporal:7233');
      expect(String(env.DATABASE_URL), name).toMatch(/^postgres(ql)?:\/\/[^@]+@postgres:5432\//);
      expect(env.PROVIDER_BASE_URL, name).toBe('http://sandbox:4010');
      expect(services[name]?.depends_on?.temporal?.condition).toBe('service_healthy');
      expect(services[name]?.depends_on?.postgres?.condition).toBe('service_healthy');
    }
  });

  it('encrypts payloads with the same keys in api and worker, and points the UI at the codec endpoint', () => {
    for (const name of ['worker', 'api']) {
      const env = services[name]?.environment ?? {};
      expect(String(env.CODEC_KEYS), name).toMatch(/CODEC_KEYS/);
      expect(String(env.CODEC_ACTIVE_KEY_ID), name).toMatch(/CODEC_ACTIVE_KEY_ID/);
    }
    expect(String(services.api?.environment?.CODEC_TOKENS)).toMatch(/CODEC_TOKENS/);
    // The back office's session secret is the deployment's own, never the public dev value.
    expect(String(services.api?.environment?.BACKOFFICE_SESSION_SECRET)).toMatch(
      /\$\{BACKOFFICE_SESSION_SECRET:\?/,
    );
    expect(services.api?.environment?.TEMPORAL_UI_URL).toBe('http://localhost:8233');
    expect(services['temporal-ui']?.environment?.TEMPORAL_CODEC_ENDPOINT).toBe('http://localhost:3000/codec');
  });

  it('requires every secret, with no default, in each service that reads it, saying how to make it', () => {
    const required = (name: string) =>
      new RegExp(`^\\$\\{${name}:\\?[^}]*openssl rand -(hex|base64) 32[^}]*\\}$`);
    for (const part of ['api', 'worker'] as const) {
      const env = services[part]?.environment ?? {};
      for (const name of SECRETS_READ_BY[part])
        expect(String(env[name]), `${part} ${name}`).toMatch(required(name));
      expect(env.NODE_ENV, part).toBe('production');
    }
    // Wherever else one is given, and however: never with a default.
    for (const name of SECRET_VARIABLES) {
      for (const m of composeText.matchAll(new RegExp(`\\$\\{${name}(:?[-?+])?([^}]*)\\}`, 'g')))
        expect(m[0], name).toMatch(required(name));
      expect(composeText, name).not.toMatch(new RegExp(`^\\s*${name}:\\s*[^$\\s]`, 'm'));
    }
  });

  it("gives the provider's credentials no default, the sandbox's included", () => {
    for (const part of ['api', 'worker', 'sandbox'] as const) {
      const env = services[part]?.environment ?? {};
      for (const name of PROVIDER_SECRETS)
        expect(String(env[name]), `${part} ${name}`).toMatch(new RegExp(`^\\$\\{${name}:\\?[^}]+\\}$`));
    }
    for (const name of PROVIDER_SECRETS) {
      for (const m of composeText.matchAll(new RegExp(`\\$\\{${name}(:?[-?+])?([^}]*)\\}`, 'g')))
        expect(m[1], `${name}: ${m[0]}`).toBe(':?');
      expect(composeText, name).not.toMatch(/sandbox-secret|sandbox-api-key/);
    }
  });

  it("screens every person: the API and workers ask the sandbox's registry emulation, with a secret of the deployment's own", () => {
    for (const part of ['api', 'worker', 'sandbox'] as const) {
      const env = services[part]?.environment ?? {};
      expect(env.ELIGIBILITY_URL, part).toBe('http://sandbox:4010/eligibility/check');
      expect(String(env.ELIGIBILITY_SECRET), part).toMatch(
        /^\$\{ELIGIBILITY_SECRET:\?[^}]*whsec_[^}]*openssl rand -base64 32[^}]*\}$/,
      );
      expect(env.ELIGIBILITY_SCREENED_ELSEWHERE, part).toBeUndefined();
    }
  });

  it("gives Postgres a password of the deployment's own, the same wherever it is used", () => {
    const required = /^\$\{POSTGRES_PASSWORD:\?[^}]*openssl rand -hex 32[^}]*\}$/;
    expect(String(services.postgres?.environment?.POSTGRES_PASSWORD)).toMatch(required);
    expect(String(services['temporal-schema']?.environment?.SQL_PASSWORD)).toMatch(required);
    expect(String(services.temporal?.environment?.POSTGRES_PWD)).toMatch(required);
    for (const name of ['worker', 'api']) {
      const url = String(services[name]?.environment?.DATABASE_URL);
      expect(url, name).toMatch(/^postgresql:\/\/pixflow:\$\{POSTGRES_PASSWORD:\?[^}]*\}@postgres:5432\//);
    }
    // No literal password anywhere: every mention of one is the required variable.
    expect(composeText).not.toMatch(/^\s*\w*(PASSWORD|PWD):\s*[^$\s]/m);
  });

  it('publishes only the API beyond the host: every other port answers on loopback', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const port of service.ports ?? []) {
        if (name === 'api') continue;
        expect(port, name).toMatch(/^127\.0\.0\.1:/);
      }
    }
    expect(services.api?.ports).toContain('3000:3000');
  });

  it('sets the back office cookie Secure, for TLS in front of the API', () => {
    expect(services.api?.environment?.BACKOFFICE_SECURE_COOKIE).toBe('true');
    // biome-ignore lint/suspicious/noTemplateCurlyInString: compose's ${NAME:-default}, unset by default
    expect(String(services.api?.environment?.TRUST_PROXY)).toBe('${TRUST_PROXY:-}');
  });

  it('builds an image that sets no secret, and runs it as production', () => {
    const dockerfile = readFileSync(path.join(__dirname, '../../Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^ENV NODE_ENV=production$/m);
    for (const name of SECRET_VARIABLES) expect(dockerfile, name).not.toContain(name);
  });

  it('exposes metrics: the API on 3000, the two workers on 3001 and 3002', () => {
    expect(services.worker?.ports).toContain('127.0.0.1:3001-3002:3001');
    expect(services.api?.ports).toContain('3000:3000');
  });

  it("runs every Temporal service's health check and commands with programs its image ships", () => {
    expect(commandsOf('a --x y | grep -q Z')).toEqual(['a', 'grep']);
    let checked = 0;
    for (const [name, s] of Object.entries(services)) {
      const shipped = IMAGE_COMMANDS[s.image ?? ''];
      if (!shipped) continue;
      const [kind, ...test] = s.healthcheck?.test ?? [];
      const run = [
        ...(kind === 'CMD-SHELL' ? commandsOf(test.join(' ')) : kind === 'CMD' ? [test[0]!] : []),
        ...(JSON.stringify(s.entrypoint) === '["sh","-c"]'
          ? commandsOf(([] as unknown[]).concat(s.command).join(' '))
          : []),
      ];
      for (const cmd of run) expect(shipped, `${name}: ${cmd}`).toContain(cmd);
      checked += run.length;
    }
    // The server's check, the schema's and the setup's commands were all looked at.
    expect(commandsOf(services.temporal?.healthcheck?.test.slice(1).join(' ') ?? '')).toEqual([
      'temporal',
      'grep',
    ]);
    expect(checked).toBeGreaterThanOrEqual(8);
  });

  it("has the sandbox send its notifications to the API's ingress from its own settings", () => {
    const sandbox = services.sandbox?.environment ?? {};
    const api = services.api?.environment ?? {};
    expect(envSchema.shape).toHaveProperty('SANDBOX_NOTIFICATION_URL');
    expect(sandbox.SANDBOX_NOTIFICATION_URL).toBe(
      `http://api:${api.API_PORT}/webhooks/provider/${api.WEBHOOK_SECRET}`,
    );
    expect(sandbox.WEBHOOK_PARTNER_ID).toBe(api.WEBHOOK_PARTNER_ID);
    // The port it listens on is said, as the API's is, so the addresses above are the real ones.
    expect(String(sandbox.SANDBOX_PORT)).toBe(services.sandbox?.ports?.[0]?.split(':').at(-1));
  });

  it('gives every long-running service a health check', () => {
    for (const name of ['postgres', 'temporal', 'temporal-ui', 'sandbox', 'worker', 'api']) {
      expect(services[name]?.healthcheck?.test.length, name).toBeGreaterThan(0);
    }
  });

  it('creates the namespace and registers every search attribute the flows use, one at a time', () => {
    const setup = JSON.stringify(services['temporal-setup']?.command);
    expect(setup).toContain('temporal operator namespace create $$tls --namespace default');
    for (const key of searchAttributeKeys) {
      const type = { KEYWORD: 'Keyword', INT: 'Int' }[key.type as 'KEYWORD' | 'INT'];
      expect(setup).toContain(`${key.name}=${type}`);
    }
    // Several --name in one call register only the first on a SQL visibility store.
    const raw = ([] as unknown[]).concat(services['temporal-setup']?.command).join(' ');
    expect(raw).toContain('search-attribute create $$tls --namespace default --name "$${sa%%=*}" --type');
    expect(services['temporal-setup']?.depends_on?.temporal?.condition).toBe('service_healthy');
  });

  describe('Temporal over mutual TLS', () => {
    const SERVER_DIR = '/etc/temporal/tls';
    const CLIENT_DIR = '/etc/pixflow/temporal-tls';
    const volumes = (name: string) => z.array(z.string()).parse(services[name]?.volumes ?? []);
    const envOf = (name: string) => services[name]?.environment ?? {};

    it('the server requires a client certificate of the CA on the frontend and between its services', () => {
      // The variables of the image's config_template.yaml, temporalio/temporal v1.29.1.
      expect(envOf('temporal')).toMatchObject({
        TEMPORAL_TLS_REQUIRE_CLIENT_AUTH: 'true',
        TEMPORAL_TLS_SERVER_CA_CERT: `${SERVER_DIR}/ca.pem`,
        TEMPORAL_TLS_SERVER_CERT: `${SERVER_DIR}/server.pem`,
        TEMPORAL_TLS_SERVER_KEY: `${SERVER_DIR}/server.key`,
        TEMPORAL_TLS_FRONTEND_CERT: `${SERVER_DIR}/server.pem`,
        TEMPORAL_TLS_FRONTEND_KEY: `${SERVER_DIR}/server.key`,
        // The template lists both as the frontend's client CAs.
        TEMPORAL_TLS_CLIENT1_CA_CERT: `${SERVER_DIR}/ca.pem`,
        TEMPORAL_TLS_CLIENT2_CA_CERT: `${SERVER_DIR}/ca.pem`,
        TEMPORAL_TLS_INTERNODE_SERVER_NAME: 'temporal',
        TEMPORAL_TLS_FRONTEND_SERVER_NAME: 'temporal',
      });
      expect(volumes('temporal')).toEqual([
        expect.stringMatching(/^\$\{TEMPORAL_TLS_DIR:\?[^}]+\}\/server:\/etc\/temporal\/tls:ro$/),
      ]);
      const health = services.temporal?.healthcheck?.test.join(' ') ?? '';
      expect(health).toContain(
        `--tls-ca-path ${SERVER_DIR}/ca.pem --tls-cert-path ${SERVER_DIR}/server.pem --tls-key-path ${SERVER_DIR}/server.key --tls-server-name temporal`,
      );
    });

    it('gives the workers, the API, the setup and the UI the client certificate, read-only; the CA key to no one', () => {
      const client = expect.stringMatching(
        /^\$\{TEMPORAL_TLS_DIR:\?[^}]+\}\/client:\/etc\/pixflow\/temporal-tls:ro$/,
      );
      for (const name of ['worker', 'api', 'temporal-setup', 'temporal-ui'])
        expect(volumes(name), name).toEqual([client]);
      for (const name of ['worker', 'api'])
        expect(envOf(name), name).toMatchObject({
          TEMPORAL_TLS_CA_PATH: `${CLIENT_DIR}/ca.pem`,
          TEMPORAL_TLS_CERT_PATH: `${CLIENT_DIR}/client.pem`,
          TEMPORAL_TLS_KEY_PATH: `${CLIENT_DIR}/client.key`,
          TEMPORAL_TLS_SERVER_NAME: 'temporal',
        });
      // temporalio/ui-server v2.42.1, config/docker.yaml.
      expect(envOf('temporal-ui')).toMatchObject({
        TEMPORAL_TLS_CA: `${CLIENT_DIR}/ca.pem`,
        TEMPORAL_TLS_CERT: `${CLIENT_DIR}/client.pem`,
        TEMPORAL_TLS_KEY: `${CLIENT_DIR}/client.key`,
        TEMPORAL_TLS_SERVER_NAME: 'temporal',
      });
      const setup = ([] as unknown[]).concat(services['temporal-setup']?.command).join(' ');
      expect(setup).toContain(
        `tls="--tls-ca-path ${CLIENT_DIR}/ca.pem --tls-cert-path ${CLIENT_DIR}/client.pem --tls-key-path ${CLIENT_DIR}/client.key --tls-server-name temporal"`,
      );
      // Every CLI call there carries it.
      expect(setup.match(/temporal operator \S+ \S+(?: \S+)?/g)?.every((c) => /\$\$tls$/.test(c))).toBe(true);
      for (const [name, s] of Object.entries(services))
        for (const v of z.array(z.string()).parse(s.volumes ?? [])) expect(v, name).not.toMatch(/\/ca[:/]/);
    });
  });
});
