import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../common/config';
import { PROVIDER_SECRETS, SECRETS_READ_BY } from '../../common/production-secrets';
import {
  PUBLIC_CODEC_KEY_MATERIAL,
  PUBLIC_POSTGRES_PASSWORDS,
  PUBLIC_SECRET_VALUES,
} from '../../common/public-secrets';
import { composeCheckBinary, composeConfig, composeProject } from '../helpers/compose-check';

// docker-compose.yml loaded as `docker compose config` loads it (the Compose specification's
// schema, interpolation, required variables), with .env.example as the .env a deployer copies.

const ROOT = path.resolve(__dirname, '../..');
const COMPOSE = path.join(ROOT, 'docker-compose.yml');
const ENV_EXAMPLE = path.join(ROOT, '.env.example');
const composeText = readFileSync(COMPOSE, 'utf8');
const example = Object.fromEntries(
  readFileSync(ENV_EXAMPLE, 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]),
);
const required = [...new Set([...composeText.matchAll(/\$\{([A-Z_]+):\?/g)].map((m) => m[1]!))];

const scratch = mkdtempSync(path.join(os.tmpdir(), 'pixflow-compose-'));
const file = (name: string, text: string) => {
  const p = path.join(scratch, name);
  writeFileSync(p, text);
  return p;
};

beforeAll(() => {
  composeCheckBinary();
}, 300_000);

describe('docker-compose.yml with .env.example', () => {
  it('loads: valid against the Compose specification, every service there', () => {
    const r = composeConfig(COMPOSE, ENV_EXAMPLE);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (const service of ['postgres', 'temporal', 'temporal-ui', 'sandbox', 'worker', 'api'])
      expect(r.stdout.split('\n'), service).toContain(service);
  });

  it('names every variable the compose file requires, and says how to make each secret', () => {
    expect(required.length).toBeGreaterThan(5);
    const text = readFileSync(ENV_EXAMPLE, 'utf8');
    for (const name of required) {
      expect(example[name], name).toBeTruthy();
      // Temporal's certificates: a folder the script makes.
      if (name === 'TEMPORAL_TLS_DIR')
        expect(text, name).toMatch(
          /scripts\/make-temporal-certs\.ts \.\/temporal-tls\nTEMPORAL_TLS_DIR=\.\/temporal-tls\n/,
        );
      // The provider's credentials come from the provider, not from openssl.
      else if (name !== 'CODEC_ACTIVE_KEY_ID' && !(PROVIDER_SECRETS as readonly string[]).includes(name))
        expect(text, name).toMatch(new RegExp(`openssl rand[^\\n]*\\n${name}=`));
    }
  });

  it('gives only public placeholders, which production refuses', () => {
    for (const name of [
      'API_KEYS',
      'WEBHOOK_SECRET',
      'CODEC_TOKENS',
      'PII_HASH_KEY',
      'BACKOFFICE_SESSION_SECRET',
      'ELIGIBILITY_SECRET',
      // The sandbox's: refused once the provider is not the sandbox.
      ...PROVIDER_SECRETS,
    ])
      expect(PUBLIC_SECRET_VALUES.has(example[name] as string), name).toBe(true);
    expect(PUBLIC_CODEC_KEY_MATERIAL).toContain(String(example.CODEC_KEYS).split(':')[1]);
    expect(PUBLIC_POSTGRES_PASSWORDS).toContain(example.POSTGRES_PASSWORD);
    // As compose hands them to the API, production refuses each: the secrets, the Postgres
    // password in DATABASE_URL, and the provider's once it is not the sandbox.
    const project = composeProject(COMPOSE, ENV_EXAMPLE) as {
      services: Record<string, { environment?: Record<string, string | null> }>;
    };
    const api = Object.fromEntries(
      Object.entries(project.services.api?.environment ?? {}).filter(([, v]) => v !== null),
    ) as Record<string, string>;
    const refused = (env: Record<string, string>) => {
      try {
        loadConfig(env, { secrets: SECRETS_READ_BY.api });
        return [];
      } catch (err) {
        if (err instanceof ConfigError) return err.problems.map((l) => l.split(/[:=]/)[0]);
        throw err;
      }
    };
    expect(refused(api).sort()).toEqual(
      [...SECRETS_READ_BY.api, 'DATABASE_URL', 'ELIGIBILITY_SECRET'].sort(),
    );
    const realProvider = { ...api, PROVIDER_BASE_URL: 'https://api.provider.example' };
    expect(refused(realProvider)).toEqual(expect.arrayContaining([...PROVIDER_SECRETS]));
  });

  it('resolves every service as compose would run it: commands, environment after interpolation, conditions', () => {
    const project = composeProject(COMPOSE, ENV_EXAMPLE) as {
      services: Record<
        string,
        {
          command?: string[];
          environment?: Record<string, string | null>;
          depends_on?: Record<string, { condition: string }>;
          deploy?: { replicas?: number };
        }
      >;
    };
    const { sandbox, api, worker, 'temporal-schema': schema } = project.services;
    expect(api?.command).toEqual(['node', 'dist/api/main.js']);
    expect(api?.environment?.WEBHOOK_SECRET).toBe(example.WEBHOOK_SECRET);
    expect(sandbox?.environment?.SANDBOX_NOTIFICATION_URL).toBe(
      `http://api:3000/webhooks/provider/${example.WEBHOOK_SECRET}`,
    );
    expect(worker?.deploy?.replicas).toBe(2);
    expect(api?.depends_on?.worker?.condition).toBe('service_healthy');
    // `$$` in the file is a literal `$` for the shell.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the shell's ${name%%pattern}, as compose hands it over
    expect(schema?.command?.join(' ')).toContain('db="${store%%:*}"');
  });

  it('does not load without the secrets: each missing one is named', () => {
    const r = composeConfig(COMPOSE, file('empty.env', ''));
    expect(r.code).toBe(1);
    for (const name of required) expect(r.stderr, name).toContain(`required variable ${name} is missing`);
  });

  it('refuses a file the specification does not allow', () => {
    const broken = composeText.replace('restart: unless-stopped', 'restart: [unless-stopped]');
    expect(broken).not.toBe(composeText);
    const r = composeConfig(file('docker-compose.yml', broken), ENV_EXAMPLE);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/restart/);
  });
});
