import { PUBLIC_CODEC_KEY_MATERIAL, PUBLIC_SECRET_VALUES } from './public-secrets';

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

const publicMaterial = new Set(
  PUBLIC_CODEC_KEY_MATERIAL.map((b) => Buffer.from(b, 'base64').toString('hex')),
);

/** What is public in a variable's value, or undefined; `value` is set. */
function publicPart(name: SecretVariable, value: string): string | undefined {
  if (name === 'CODEC_KEYS') {
    for (const entry of list(value)) {
      const sep = entry.indexOf(':');
      const material = Buffer.from(entry.slice(sep + 1), 'base64').toString('hex');
      if (publicMaterial.has(material)) return `key "${entry.slice(0, Math.max(sep, 0))}" is public`;
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
