import { PUBLIC_CODEC_KEY_MATERIAL, PUBLIC_POSTGRES_PASSWORDS, PUBLIC_SECRET_VALUES } from './public-secrets';

// Outside the embedded stack (NODE_ENV=production, as the Docker image and docker-compose.yml
// set it) a process starts only with its own secrets: each one it reads set, and none of them a
// value anyone can read in this repository. Development and tests keep config.ts's public
// defaults; `npm start` makes its own per data folder (scripts/embedded-secrets.ts).

export const SECRET_VARIABLES = [
  'API_KEYS',
  'CODEC_KEYS',
  'PII_HASH_KEY',
  'WEBHOOK_SECRET',
  'BACKOFFICE_SESSION_SECRET',
  'CODEC_TOKENS',
] as const;
export type SecretVariable = (typeof SECRET_VARIABLES)[number];

/** The secrets each process reads: production refuses to start it unless each is set. */
export const SECRETS_READ_BY = {
  // API_KEYS are its only keys today; were keys also kept elsewhere (Postgres), API_KEYS would
  // leave this list for a check of "API_KEYS or a stored key" in api/main.ts. Values set are
  // checked whether required or not.
  api: SECRET_VARIABLES,
  worker: ['CODEC_KEYS', 'PII_HASH_KEY'],
  // The provider's stand-in holds none of pixflow's secrets.
  sandbox: [],
  // Only DATABASE_URL: applying migrations needs no key.
  migrate: [],
} as const satisfies Record<string, readonly SecretVariable[]>;

const HEX = 'make one with `openssl rand -hex 32`';

/** How to make each, as the refusal says it. */
export const HOW_TO_MAKE: Record<SecretVariable, string> = {
  API_KEYS: `${HEX} (comma-separated for several)`,
  CODEC_KEYS:
    'make one as <id>:<32 bytes in base64>, e.g. CODEC_KEYS=k1:$(openssl rand -base64 32) with CODEC_ACTIVE_KEY_ID=k1 (comma-separated for several)',
  PII_HASH_KEY: HEX,
  WEBHOOK_SECRET: `${HEX} (hex: it is a URL path segment)`,
  BACKOFFICE_SESSION_SECRET: HEX,
  CODEC_TOKENS: `${HEX} (comma-separated for several; the Temporal UI sends one to /codec)`,
};

const list = (v: string) =>
  v
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The bytes a key stands for, as hex: what its user keys with. `whsec_` (Standard Webhooks'
 * prefix, which `new Webhook()` takes or leaves), padding and the base64url alphabet change
 * nothing in them, so none of those makes a public key a new one.
 */
export const keyMaterial = (value: string) =>
  Buffer.from(value.trim().replace(/^whsec_/, ''), 'base64').toString('hex');

const publicMaterial = new Set(PUBLIC_CODEC_KEY_MATERIAL.map(keyMaterial));

/** Signing secrets (`whsec_<base64>`): compared by the key material they sign with. */
const SIGNING_SECRET = /^(whsec_)?[A-Za-z0-9+/_-]{22,}={0,2}$/;
const publicSigningMaterial = new Set(
  [...PUBLIC_SECRET_VALUES].filter((v) => SIGNING_SECRET.test(v)).map(keyMaterial),
);

/** What is public in a variable's value, or undefined; `value` is set. */
function publicPart(name: SecretVariable, value: string): string | undefined {
  if (name === 'CODEC_KEYS') {
    for (const entry of list(value)) {
      const sep = entry.indexOf(':');
      if (publicMaterial.has(keyMaterial(entry.slice(sep + 1))))
        return `key "${entry.slice(0, Math.max(sep, 0))}" is public`;
    }
    return undefined;
  }
  if (name === 'API_KEYS' || name === 'CODEC_TOKENS') {
    const all = list(value);
    const n = all.filter((v) => PUBLIC_SECRET_VALUES.has(v)).length;
    if (!n) return undefined;
    return all.length === 1
      ? 'is public'
      : `${n} of its ${all.length} values ${n === 1 ? 'is' : 'are'} public`;
  }
  return PUBLIC_SECRET_VALUES.has(value) ? 'is public' : undefined;
}

/**
 * Production's refusals, one line per variable: each of `required` unset, and every secret
 * variable set to a value from this repository. `env` holds only set variables.
 */
export function productionSecretProblems(
  env: Record<string, string | undefined>,
  required: readonly SecretVariable[],
): Map<SecretVariable, string> {
  const problems = new Map<SecretVariable, string>();
  for (const name of SECRET_VARIABLES) {
    const value = env[name];
    const unset = value === undefined || list(value).length === 0;
    if (unset) {
      if (required.includes(name))
        problems.set(name, `${name}: not set (production needs its own); ${HOW_TO_MAKE[name]}`);
      continue;
    }
    const found = publicPart(name, value);
    if (found)
      problems.set(
        name,
        `${name}: ${found} (it is in the pixflow repository, for anyone to read); ${HOW_TO_MAKE[name]}`,
      );
  }
  return problems;
}

const WHSEC = 'make one as whsec_$(openssl rand -base64 32)';

/** The signing secrets of the services pixflow asks, each read only where its URL is set. */
export const SIGNING_SECRETS = [
  ['ELIGIBILITY_SECRET', 'ELIGIBILITY_URL'],
  ['PAYOUT_AUTHORIZATION_SECRET', 'PAYOUT_AUTHORIZATION_URL'],
] as const;

/** The provider's credentials: the schema's defaults are the sandbox's, public. */
export const PROVIDER_SECRETS = ['PROVIDER_CLIENT_SECRET', 'PROVIDER_API_KEY'] as const;

const PUBLIC_PASSWORDS = new Set([...PUBLIC_POSTGRES_PASSWORDS, ...PUBLIC_SECRET_VALUES]);

/** A Postgres URL's password (in its user part or as `?password=`), or undefined. */
function postgresPassword(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const query = parsed.searchParams.get('password');
  if (query) return query;
  if (!parsed.password) return undefined;
  try {
    return decodeURIComponent(parsed.password);
  } catch {
    return parsed.password;
  }
}

const isLoopback = (host: string) =>
  host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);

/**
 * Whether the provider pixflow talks to is its own sandbox: its URLs unset (the local sandbox),
 * on this machine, or compose's `sandbox` service. Anywhere else is a real provider, which must
 * never be sent the sandbox's public credentials.
 */
export function providerIsSandbox(env: Record<string, string | undefined>): boolean {
  return (['PROVIDER_BASE_URL', 'PROVIDER_AUTH_URL'] as const).every((name) => {
    const value = env[name];
    if (!value) return true;
    try {
      const host = new URL(value).hostname;
      return host === 'sandbox' || isLoopback(host);
    } catch {
      return true; // malformed: the schema says so
    }
  });
}

/**
 * Production's refusals for the settings beyond SECRET_VARIABLES, one line per variable: a
 * signing secret missing where its service is named, or public (by key material, `whsec_` or
 * not); a Postgres password from this repository; the sandbox's credentials sent to a provider
 * that is not the sandbox. `env` holds only set variables.
 */
export function productionSettingProblems(env: Record<string, string | undefined>): Map<string, string> {
  const problems = new Map<string, string>();
  const publicLine = (name: string, what = 'is public') =>
    `${name}: ${what} (it is in the pixflow repository, for anyone to read)`;
  for (const [name, url] of SIGNING_SECRETS) {
    const value = env[name];
    if (value === undefined) {
      if (env[url]) problems.set(name, `${name}: not set (production needs its own with ${url}); ${WHSEC}`);
    } else if (PUBLIC_SECRET_VALUES.has(value) || publicSigningMaterial.has(keyMaterial(value)))
      problems.set(name, `${publicLine(name, 'is public, with or without its whsec_ prefix')}; ${WHSEC}`);
  }
  const password = env.DATABASE_URL && postgresPassword(env.DATABASE_URL);
  if (password && PUBLIC_PASSWORDS.has(password))
    problems.set(
      'DATABASE_URL',
      `${publicLine('DATABASE_URL', 'its password is public')}; make one with \`openssl rand -hex 32\` and give it to the role (ALTER ROLE <user> PASSWORD '<it>')`,
    );
  // The API Pix connector has no sandbox default: a value from this repository is refused.
  const apiPixSecret = env.API_PIX_CLIENT_SECRET;
  if (apiPixSecret !== undefined && PUBLIC_PASSWORDS.has(apiPixSecret))
    problems.set(
      'API_PIX_CLIENT_SECRET',
      `${publicLine('API_PIX_CLIENT_SECRET')}; set the client secret the PSP gave pixflow`,
    );
  if (!providerIsSandbox(env))
    for (const name of PROVIDER_SECRETS) {
      const value = env[name];
      if (value === undefined)
        problems.set(
          name,
          `${name}: not set, and the provider is not the sandbox (its default is the sandbox's); set the provider's own`,
        );
      else if (PUBLIC_SECRET_VALUES.has(value))
        problems.set(
          name,
          `${publicLine(name, "is the sandbox's")}, and the provider is not the sandbox; set the provider's own`,
        );
    }
  return problems;
}
