import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../common/config';
import { PUBLIC_SECRET_VALUES } from '../../common/public-secrets';
import { dataDirSecrets, SECRETS_FILE, SecretsFileError } from '../../scripts/embedded-secrets';

// `npm start`'s secrets: made once per data folder, kept there for its owner only, used again.

const dirs: string[] = [];
const newDir = () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pixflow-secrets-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the embedded stack’s secrets', () => {
  it('are made at the first start, in a file only its owner may read, and used again after', () => {
    const dir = newDir();
    const first = dataDirSecrets(dir, {});
    expect(first.created).toBe(true);
    expect(first.file).toBe(path.join(dir, SECRETS_FILE));
    expect(statSync(first.file).mode & 0o777).toBe(0o600);
    expect(Object.keys(first.env).sort()).toEqual([
      'BACKOFFICE_SESSION_SECRET',
      'CODEC_ACTIVE_KEY_ID',
      'CODEC_KEYS',
      'CODEC_TOKENS',
      'PII_HASH_KEY',
      'WEBHOOK_SECRET',
    ]);
    // The file holds the embedded Postgres's password too, which no part gets in its environment.
    const { EMBEDDED_PG_PASSWORD, ...forTheParts } = JSON.parse(readFileSync(first.file, 'utf8'));
    expect(forTheParts).toEqual(first.env);
    expect(EMBEDDED_PG_PASSWORD).toMatch(/^[\w-]{43}$/);
    expect(first.postgresPassword).toBe(EMBEDDED_PG_PASSWORD);
    expect(PUBLIC_SECRET_VALUES.has(EMBEDDED_PG_PASSWORD)).toBe(false);

    const again = dataDirSecrets(dir, {});
    expect(again.created).toBe(false);
    expect(again.env).toEqual(first.env);
    expect(statSync(first.file).mode & 0o777).toBe(0o600);

    // Another folder, other secrets.
    const other = dataDirSecrets(newDir(), {});
    for (const [name, value] of Object.entries(other.env))
      if (name !== 'CODEC_ACTIVE_KEY_ID') expect(value, name).not.toBe(first.env[name]);
  });

  it('are fresh, not public, and what production accepts', () => {
    const { env } = dataDirSecrets(newDir(), {});
    for (const value of Object.values(env)) expect(PUBLIC_SECRET_VALUES.has(value)).toBe(false);
    // A URL path segment as it is.
    expect(env.WEBHOOK_SECRET).toMatch(/^[\w-]{43}$/);
    const config = loadConfig({
      NODE_ENV: 'production',
      API_KEYS: randomBytes(32).toString('hex'),
      // Screening is not these secrets' business (production needs a registry or this).
      ELIGIBILITY_SCREENED_ELSEWHERE: 'true',
      ...env,
    });
    expect(config.codecKeys.keys.get(config.codecKeys.activeKeyId)?.length).toBe(32);
  });

  it('leave the environment’s own values alone; the active key id goes with the keys', () => {
    const dir = newDir();
    const stored = dataDirSecrets(dir, {}).env;
    const mine = { WEBHOOK_SECRET: randomBytes(32).toString('hex'), CODEC_KEYS: 'mine:abc' };
    const { env } = dataDirSecrets(dir, { ...mine, PII_HASH_KEY: '' });
    expect(env.WEBHOOK_SECRET).toBeUndefined();
    expect(env.CODEC_KEYS).toBeUndefined();
    expect(env.CODEC_ACTIVE_KEY_ID).toBeUndefined();
    // Empty is unset, as the configuration reads it.
    expect(env.PII_HASH_KEY).toBe(stored.PII_HASH_KEY);
    expect(env.BACKOFFICE_SESSION_SECRET).toBe(stored.BACKOFFICE_SESSION_SECRET);
    // Unchanged on disk.
    const { EMBEDDED_PG_PASSWORD: _password, ...onDisk } = JSON.parse(
      readFileSync(path.join(dir, SECRETS_FILE), 'utf8'),
    );
    expect(onDisk).toEqual(stored);
  });

  it('tighten a file that was loosened, and refuse one that is not theirs rather than replace it', () => {
    const dir = newDir();
    const { file, env } = dataDirSecrets(dir, {});
    chmodSync(file, 0o644);
    expect(dataDirSecrets(dir, {}).env).toEqual(env);
    expect(statSync(file).mode & 0o777).toBe(0o600);

    writeFileSync(file, '{"WEBHOOK_SECRET": "x"}');
    expect(() => dataDirSecrets(dir, {})).toThrow(SecretsFileError);
    expect(readFileSync(file, 'utf8')).toBe('{"WEBHOOK_SECRET": "x"}');
  });

  it('are not made for a folder with data from before: that data was sealed with the old defaults', () => {
    const dir = newDir();
    mkdirSync(path.join(dir, 'pg'));
    writeFileSync(path.join(dir, 'pg', 'PG_VERSION'), '18\n');
    const older = dataDirSecrets(dir, {});
    expect(older).toMatchObject({ env: {}, created: false, older: true });
    expect(() => statSync(older.file)).toThrow();
    expect(older.postgresPassword).toBeUndefined();
  });

  it('keep the public Postgres password for a folder whose file is from before it had its own', () => {
    const dir = newDir();
    const { file } = dataDirSecrets(dir, {});
    const { EMBEDDED_PG_PASSWORD: _password, ...before } = JSON.parse(readFileSync(file, 'utf8'));
    writeFileSync(file, JSON.stringify(before));
    const again = dataDirSecrets(dir, {});
    expect(again.postgresPassword).toBeUndefined();
    expect(again.env).toEqual(before);
  });

  it('are the secrets docs/configuration.md says npm start makes its own', () => {
    const made = Object.keys(dataDirSecrets(newDir(), {}).env);
    const page = readFileSync(path.join(__dirname, '../../docs/configuration.md'), 'utf8');
    const claimed = [...page.matchAll(/^\| `([A-Z_]+)` \| [^|]*`npm start`: its own/gm)].map((m) => m[1]);
    expect(claimed.length).toBeGreaterThan(0);
    for (const name of claimed) expect(made, name).toContain(name);
  });
});
