import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../common/config';
import { productionSettingProblems } from '../../common/production-secrets';

// The API Pix connector's settings: all of the required ones or none, the client secret from the
// variable or its file, never shown.

const ALL = {
  API_PIX_BASE_URL: 'https://psp.example/api/v2',
  API_PIX_CLIENT_ID: 'pixflow',
  // Made here, as a deployment's own: none from this repository.
  API_PIX_CLIENT_SECRET: randomBytes(16).toString('hex'),
  API_PIX_CERT_FILE: '/run/secrets/api-pix-cert.pem',
  API_PIX_KEY_FILE: '/run/secrets/api-pix-key.pem',
  API_PIX_PIX_KEY: 'pix@psp.example',
};

const problemsOf = (env: Record<string, string>): string[] => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('the API Pix connector settings', () => {
  it('unset: no connector', () => {
    expect(loadConfig({}).apiPix).toBeUndefined();
  });

  it('all set: the connector, the optional ones on their defaults', () => {
    expect(loadConfig(ALL).apiPix).toEqual({
      baseUrl: ALL.API_PIX_BASE_URL,
      clientId: 'pixflow',
      clientSecret: ALL.API_PIX_CLIENT_SECRET,
      certFile: ALL.API_PIX_CERT_FILE,
      keyFile: ALL.API_PIX_KEY_FILE,
      pixKey: ALL.API_PIX_PIX_KEY,
    });
    const more = loadConfig({
      ...ALL,
      API_PIX_TOKEN_URL: 'https://auth.psp.example/token',
      API_PIX_CA_FILE: '/run/secrets/psp-ca.pem',
      API_PIX_EXPIRY_SECONDS: '600',
    }).apiPix;
    expect(more).toMatchObject({
      tokenUrl: 'https://auth.psp.example/token',
      caFile: '/run/secrets/psp-ca.pem',
      expirySeconds: 600,
    });
  });

  it('some set: one line naming every missing one, and never the secret', () => {
    const problems = problemsOf({
      API_PIX_BASE_URL: ALL.API_PIX_BASE_URL,
      API_PIX_CLIENT_SECRET: ALL.API_PIX_CLIENT_SECRET,
    });
    expect(problems).toEqual([
      'API_PIX_*: the API Pix connector needs all of its settings, and API_PIX_CLIENT_ID, API_PIX_CERT_FILE, API_PIX_KEY_FILE, API_PIX_PIX_KEY are not set (docs/configuration.md)',
    ]);
    expect(problemsOf({ API_PIX_CA_FILE: '/ca.pem' })[0]).toContain('API_PIX_BASE_URL, API_PIX_CLIENT_ID');
  });

  it('refuses a base URL that is not https', () => {
    expect(problemsOf({ ...ALL, API_PIX_BASE_URL: 'http://psp.example/api/v2' })).toEqual([
      'API_PIX_BASE_URL="http://psp.example/api/v2": must be an https:// URL',
    ]);
  });

  it('reads the client secret from its file, and refuses both or an unreadable one', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'api-pix-secret-'));
    const file = path.join(dir, 'secret');
    writeFileSync(file, 'from-the-file\n');
    const { API_PIX_CLIENT_SECRET: _, ...withoutSecret } = ALL;
    expect(loadConfig({ ...withoutSecret, API_PIX_CLIENT_SECRET_FILE: file }).apiPix?.clientSecret).toBe(
      'from-the-file',
    );
    expect(problemsOf({ ...ALL, API_PIX_CLIENT_SECRET_FILE: file })).toEqual([
      'API_PIX_CLIENT_SECRET / API_PIX_CLIENT_SECRET_FILE: set one of them, not both',
    ]);
    expect(problemsOf({ ...withoutSecret, API_PIX_CLIENT_SECRET_FILE: path.join(dir, 'none') })[0]).toMatch(
      /^API_PIX_CLIENT_SECRET_FILE=".*none": cannot be read \(ENOENT\)$/,
    );
  });

  it('production refuses a client secret from this repository', () => {
    expect(
      productionSettingProblems({ ...ALL, API_PIX_CLIENT_SECRET: 'sandbox-secret' }).get(
        'API_PIX_CLIENT_SECRET',
      ),
    ).toMatch(/^API_PIX_CLIENT_SECRET: is public/);
    expect(productionSettingProblems(ALL).has('API_PIX_CLIENT_SECRET')).toBe(false);
  });
});
