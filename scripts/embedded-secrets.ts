import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, linkSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

// `npm start`'s own secrets: made at the first start on a data folder (DATA_DIR), kept in it in
// a file only its owner may read, and used again at every start after, so what they sealed or
// keyed (Temporal payloads, endpoints' signing secrets, CPF hashes, sessions) stays readable.
// A variable set in the environment wins over the file's.

export const SECRETS_FILE = 'secrets.json';

const storedSchema = z.object({
  CODEC_KEYS: z.string().min(1),
  CODEC_ACTIVE_KEY_ID: z.string().min(1),
  PII_HASH_KEY: z.string().min(16),
  WEBHOOK_SECRET: z.string().min(16),
  BACKOFFICE_SESSION_SECRET: z.string().min(32),
  CODEC_TOKENS: z.string().min(1),
  // Absent from the files of folders made before it: their Postgres keeps the public password.
  EMBEDDED_PG_PASSWORD: z.string().min(16).optional(),
});
export type StoredSecrets = z.infer<typeof storedSchema>;

/** 32 random bytes, URL-safe: the webhook secret is a path segment. */
const token = () => randomBytes(32).toString('base64url');

function freshSecrets(): StoredSecrets {
  // Not dev1 (config.ts's public key): payloads sealed with that one must not be tried with this.
  const keyId = `local-${randomBytes(4).toString('hex')}`;
  return {
    CODEC_KEYS: `${keyId}:${randomBytes(32).toString('base64')}`,
    CODEC_ACTIVE_KEY_ID: keyId,
    PII_HASH_KEY: token(),
    WEBHOOK_SECRET: token(),
    BACKOFFICE_SESSION_SECRET: token(),
    // The local UI needs none (CODEC_TRUST_LOOPBACK_UI); the CLI's --codec-auth may use it.
    CODEC_TOKENS: token(),
    // The embedded Postgres's password, set at its initdb: production refuses the public one.
    EMBEDDED_PG_PASSWORD: token(),
  };
}

export class SecretsFileError extends Error {}

function readSecrets(file: string): StoredSecrets {
  // Only its owner may read it, even if a copy or a umask loosened that.
  if (statSync(file).mode & 0o077) chmodSync(file, 0o600);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new SecretsFileError(`${file} is not JSON: ${(err as Error).message}`);
  }
  const parsed = storedSchema.safeParse(raw);
  if (!parsed.success)
    throw new SecretsFileError(
      `${file} lacks ${parsed.error.issues.map((i) => i.path.join('.')).join(', ')}; it holds the keys this data folder's data was sealed with, so it is not replaced`,
    );
  return parsed.data;
}

/** Written whole under another name, then linked in: never half a file, never over another start's. */
function createSecrets(file: string): { stored: StoredSecrets; created: boolean } {
  const stored = freshSecrets();
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(stored, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(tmp, file);
    return { stored, created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST')
      return { stored: readSecrets(file), created: false };
    throw err;
  } finally {
    unlinkSync(tmp);
  }
}

/** Data from before `npm start` made secrets: sealed and keyed with config.ts's public defaults. */
const hasOlderData = (dataDir: string) =>
  ['pg/PG_VERSION', 'temporal.sqlite', 'temporal-server'].some((f) => existsSync(path.join(dataDir, f)));

export interface DataDirSecrets {
  /** The file's values the environment does not set, for the parts' environment. */
  env: Record<string, string>;
  file: string;
  /** Made by this call: the first start on this data folder. */
  created: boolean;
  /**
   * The folder holds data from before secrets were made, and no file: none is made, and its parts
   * keep the public defaults that data was sealed with (development only: production refuses them).
   */
  older: boolean;
  /** The embedded Postgres's password; unset: the public one its older data was made with. */
  postgresPassword?: string;
}

/** This data folder's secrets, made at its first start; `env`'s own (non-empty) values win. */
export function dataDirSecrets(dataDir: string, env: NodeJS.ProcessEnv): DataDirSecrets {
  const file = path.join(dataDir, SECRETS_FILE);
  const exists = existsSync(file);
  if (!exists && hasOlderData(dataDir)) return { env: {}, file, created: false, older: true };
  const { stored, created } = exists ? { stored: readSecrets(file), created: false } : createSecrets(file);
  const set = (name: string) => Boolean(env[name]);
  const out: Record<string, string> = {};
  const { EMBEDDED_PG_PASSWORD: postgresPassword, ...forTheParts } = stored;
  for (const [name, value] of Object.entries(forTheParts)) if (!set(name)) out[name] = value;
  // The active key id names one of the file's keys: it goes with them.
  if (set('CODEC_KEYS')) delete out.CODEC_ACTIVE_KEY_ID;
  return { env: out, file, created, older: false, ...(postgresPassword ? { postgresPassword } : {}) };
}
