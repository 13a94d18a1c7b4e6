// Over 400 lines on purpose: the CLI's options for both connectors' accounts, how each secret is
// read (file or stdin, never argv) and what it prints, kept together as one command's contract.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { CodecKeyError, parseCodecKeys } from '../common/codec';
import { envSchema } from '../common/config';
import { productionSecretProblems } from '../common/production-secrets';
import { type AccountKeys, sealBrandAccount } from '../connectors/accounts';
import { brandIdSchema, DEFAULT_BRAND_ID } from '../contracts/brand';
import {
  BRAND_ACCOUNT_CONNECTORS,
  type BrandAccount,
  type BrandAccountConnector,
  brandAccountConnectorSchema,
  brandAccountSchema,
  type StoredBrandAccount,
  storedBrandAccountSchema,
} from '../contracts/brand-account';
import {
  BrandAccountClash,
  listBrandAccounts,
  removeBrandAccount,
  setBrandAccount,
} from '../db/brand-accounts';
import { BrandNotFound, getBrand } from '../db/brands';
import { createPool, type Pool } from '../db/pool';
import { adminActor, adminEmail, BrandInputError } from './operator-admin';

// A brand's connector accounts for a real deployment (docs/brands.md, Connector accounts;
// scripts/operator-brands.ts hands `brand account ...` here). Setting and removing one is an
// admin's, named by --as, and in the audit trail; secrets come from a file or standard input only.

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

export const BRAND_ACCOUNT_USAGE = `usage: npm run operator -- brand account show BRAND_ID
       npm run operator -- brand account set BRAND_ID identity-payments --base-url URL --auth-url URL
                          --client-id ID --merchant MERCHANT --partner-id ID
                          --client-secret-stdin|--client-secret-file FILE
                          --api-key-stdin|--api-key-file FILE
                          --webhook-secret-stdin|--webhook-secret-file FILE --as ADMIN_EMAIL
       npm run operator -- brand account set BRAND_ID api-pix --base-url URL [--token-url URL]
                          --client-id ID --pix-key KEY --cert-file PEM --key-file PEM [--ca-file PEM]
                          [--expiry-seconds N] [--webhook-origin https://HOST:PORT]
                          [--webhook-client-ca-file PEM]
                          --client-secret-stdin|--client-secret-file FILE
                          [--webhook-secret-stdin|--webhook-secret-file FILE] --as ADMIN_EMAIL
       npm run operator -- brand account remove BRAND_ID identity-payments|api-pix --as ADMIN_EMAIL
set creates the brand's account at the connector or replaces it whole (every setting and secret
again); secrets come from a file or standard input (one of them), never the command line.
CODEC_KEYS, CODEC_ACTIVE_KEY_ID and PII_HASH_KEY must be the API's and the worker's.`;

/** Each connector's settings and secrets, as the command line names them. */
const ACCOUNT_OPTIONS = {
  'identity-payments': {
    settings: {
      baseUrl: 'base-url',
      authUrl: 'auth-url',
      clientId: 'client-id',
      merchant: 'merchant',
      partnerId: 'partner-id',
    },
    secrets: { clientSecret: 'client-secret', apiKey: 'api-key', webhookSecret: 'webhook-secret' },
  },
  'api-pix': {
    settings: {
      baseUrl: 'base-url',
      tokenUrl: 'token-url',
      clientId: 'client-id',
      pixKey: 'pix-key',
      certFile: 'cert-file',
      keyFile: 'key-file',
      caFile: 'ca-file',
      expirySeconds: 'expiry-seconds',
      webhookOrigin: 'webhook-origin',
      webhookClientCaFile: 'webhook-client-ca-file',
    },
    secrets: { clientSecret: 'client-secret', webhookSecret: 'webhook-secret' },
  },
} as const satisfies Record<
  BrandAccountConnector,
  { settings: Record<string, string>; secrets: Record<string, string> }
>;

const SETTING_OPTIONS = [
  ...new Set(Object.values(ACCOUNT_OPTIONS).flatMap((c) => Object.values(c.settings) as string[])),
];
const SECRET_OPTIONS = [
  ...new Set(Object.values(ACCOUNT_OPTIONS).flatMap((c) => Object.values(c.secrets) as string[])),
];

/** What a setting's label reads in `show`. */
const SETTING_LABEL: Record<string, string> = {
  baseUrl: 'base URL',
  authUrl: 'auth URL',
  tokenUrl: 'token URL',
  clientId: 'client id',
  merchant: 'merchant',
  partnerId: 'partner id',
  pixKey: 'Pix key',
  certFile: 'certificate file',
  keyFile: 'key file',
  caFile: 'CA file',
  expirySeconds: 'QR expiry (s)',
  webhookOrigin: 'webhook origin',
  webhookClientCaFile: 'webhook client CA file',
  clientSecret: 'client secret',
  apiKey: 'API key',
  webhookSecret: 'webhook secret',
};

const parseAccountArgs = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      as: { type: 'string' },
      ...Object.fromEntries(SETTING_OPTIONS.map((o) => [o, { type: 'string' as const }])),
      ...Object.fromEntries(SECRET_OPTIONS.map((o) => [`${o}-file`, { type: 'string' as const }])),
      ...Object.fromEntries(SECRET_OPTIONS.map((o) => [`${o}-stdin`, { type: 'boolean' as const }])),
    },
  });

type AccountArgs = ReturnType<typeof parseAccountArgs>;

const accountCommandSchema = z.discriminatedUnion(
  'command',
  [
    z.object({ command: z.literal('show'), id: brandIdSchema }),
    z.object({
      command: z.literal('remove'),
      id: brandIdSchema,
      connector: brandAccountConnectorSchema,
      as: adminEmail,
    }),
    z.object({
      command: z.literal('set'),
      id: brandIdSchema,
      connector: brandAccountConnectorSchema,
      as: adminEmail,
    }),
  ],
  { error: 'must be show, set or remove' },
);

/** The field a zod issue about the account command is about, as the command line names it. */
function accountFieldOf(path: readonly PropertyKey[], connector?: BrandAccountConnector): string {
  const [top, name] = path.map(String);
  if (top === 'id') return 'BRAND_ID';
  if (top === 'connector') return 'CONNECTOR';
  if (top === 'as') return '--as';
  const options = connector ? ACCOUNT_OPTIONS[connector] : undefined;
  if (top === 'settings' && options && name && name in options.settings)
    return `--${options.settings[name as keyof typeof options.settings]}`;
  if (top === 'secrets' && options && name && name in options.secrets) {
    const o = options.secrets[name as keyof typeof options.secrets];
    return `--${o}-stdin or --${o}-file`;
  }
  return top ?? 'command';
}

/** Why `--<secret> VALUE` is refused, naming the options that take it. */
const plainSecretRefusal = (o: string) =>
  `--${o}: a secret is never taken on the command line (ps and the shell's history show it): give --${o}-file FILE or --${o}-stdin`;

const readStdin = async () => {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
};

/**
 * The account the options describe, its secrets read from their files or standard input; a
 * BrandInputError naming the option when one is not the connector's, standard input is asked for
 * two secrets, or a file cannot be read. The values are checked by the caller.
 */
async function accountInputOf(connector: BrandAccountConnector, args: AccountArgs) {
  const v = args.values as Record<string, string | boolean | undefined>;
  const own = ACCOUNT_OPTIONS[connector];
  const ownSettings = Object.values(own.settings) as string[];
  const ownSecrets = Object.values(own.secrets) as string[];
  for (const o of SETTING_OPTIONS)
    if (v[o] !== undefined && !ownSettings.includes(o))
      throw new BrandInputError(`--${o}`, `is not a setting of an ${connector} account`);
  for (const o of SECRET_OPTIONS)
    if ((v[`${o}-file`] !== undefined || v[`${o}-stdin`]) && !ownSecrets.includes(o))
      throw new BrandInputError(`--${o}-file / --${o}-stdin`, `is not a secret of an ${connector} account`);
  const fromStdin = SECRET_OPTIONS.filter((o) => v[`${o}-stdin`]);
  if (fromStdin.length > 1)
    throw new BrandInputError(
      fromStdin.map((o) => `--${o}-stdin`).join(', '),
      'standard input carries one secret: give the others with --...-file',
    );
  const settings: Record<string, string> = {};
  for (const [field, option] of Object.entries(own.settings)) {
    const value = v[option];
    if (typeof value === 'string') settings[field] = value;
  }
  const secrets: Record<string, string> = {};
  for (const [field, option] of Object.entries(own.secrets)) {
    const file = v[`${option}-file`];
    if (v[`${option}-stdin`] && typeof file === 'string')
      throw new BrandInputError(`--${option}-stdin / --${option}-file`, 'give one of them, not both');
    if (v[`${option}-stdin`]) secrets[field] = (await readStdin()).trim();
    else if (typeof file === 'string') {
      try {
        secrets[field] = readFileSync(file, 'utf8').trim();
      } catch (e) {
        throw new BrandInputError(
          `--${option}-file`,
          `cannot read ${JSON.stringify(file)} (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
        );
      }
    }
  }
  return { connector, settings, secrets };
}

/**
 * The keys the secrets are sealed and hashed with: the codec's and PII_HASH_KEY, as loadConfig
 * reads them; production refuses them unset or public, as it does for the API and the worker.
 */
function accountKeysFromEnv(env: NodeJS.ProcessEnv): AccountKeys {
  const set = Object.fromEntries(Object.entries(env).filter(([, x]) => x !== undefined && x !== ''));
  const names = ['CODEC_KEYS', 'PII_HASH_KEY'] as const;
  if (set.NODE_ENV === 'production') {
    const refused = productionSecretProblems(set, names);
    const problem = names.map((n) => refused.get(n)).find(Boolean);
    if (problem)
      throw new BrandInputError(problem.split(':')[0] as string, problem.slice(problem.indexOf(':') + 2));
  }
  const parsed = envSchema
    .pick({ CODEC_KEYS: true, CODEC_ACTIVE_KEY_ID: true, PII_HASH_KEY: true })
    .safeParse(set);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    throw new BrandInputError(String(issue?.path[0] ?? 'CODEC_KEYS'), issue?.message ?? 'is wrong');
  }
  try {
    return {
      codecKeys: parseCodecKeys(parsed.data.CODEC_KEYS, parsed.data.CODEC_ACTIVE_KEY_ID),
      hashKey: parsed.data.PII_HASH_KEY,
    };
  } catch (e) {
    if (e instanceof CodecKeyError) throw new BrandInputError('CODEC_KEYS / CODEC_ACTIVE_KEY_ID', e.message);
    throw e;
  }
}

/**
 * The environment's webhook values each name the default brand's account while it has no record
 * of its own (connectors/accounts.ts): another brand holding one would have its notifications
 * taken for the default brand's, or the default brand's for its own. So another brand's account
 * may not take WEBHOOK_SECRET, WEBHOOK_PARTNER_ID or API_PIX_WEBHOOK_SECRET as the CLI's
 * environment sets them (the API's and the worker's, as the keys must be); a BrandInputError
 * naming the option. The environment's values are never printed.
 */
function refuseTheEnvironments(account: BrandAccount, env: NodeJS.ProcessEnv) {
  const taken = (value: string | undefined, name: string) => {
    const envValue = env[name]?.trim();
    return value !== undefined && envValue !== undefined && envValue !== '' && value === envValue;
  };
  const refusal = (option: string, name: string) =>
    new BrandInputError(
      option,
      `is the environment's ${name}, the default brand's: another brand's notifications would be taken for the default brand's; give this brand one of its own`,
    );
  if (account.connector === 'identity-payments') {
    if (taken(account.secrets.webhookSecret, 'WEBHOOK_SECRET'))
      throw refusal('--webhook-secret-stdin or --webhook-secret-file', 'WEBHOOK_SECRET');
    if (taken(account.settings.partnerId, 'WEBHOOK_PARTNER_ID'))
      throw refusal('--partner-id', 'WEBHOOK_PARTNER_ID');
  } else if (taken(account.secrets.webhookSecret, 'API_PIX_WEBHOOK_SECRET')) {
    throw refusal('--webhook-secret-stdin or --webhook-secret-file', 'API_PIX_WEBHOOK_SECRET');
  }
}

/** Runs `brand account <command> ...`; the exit code. */
export async function runBrandAccountCommand(argv: string[]): Promise<number> {
  // Before parsing: a value that looks like an option (a secret starting with "-") must not turn
  // the refusal into a question about the option's argument.
  const plain = SECRET_OPTIONS.find((o) => argv.some((a) => a === `--${o}` || a.startsWith(`--${o}=`)));
  if (plain) {
    err(`${plainSecretRefusal(plain)}; nothing changed`);
    return 2;
  }
  let args: AccountArgs;
  try {
    args = parseAccountArgs(argv);
  } catch (e) {
    err(`${(e as Error).message}\n${BRAND_ACCOUNT_USAGE}`);
    return 2;
  }
  const [command, id, connector] = args.positionals;
  const parsed = accountCommandSchema.safeParse({ command, id, connector, as: args.values.as });
  if (!parsed.success) {
    for (const i of parsed.error.issues) err(`${accountFieldOf(i.path)}: ${i.message}`);
    err(BRAND_ACCOUNT_USAGE);
    return 2;
  }
  const a = parsed.data;
  const given = Object.keys(args.values).filter((o) => o !== 'as');
  if (a.command !== 'set' && given.length) {
    err(`--${given[0]}: is for set alone; nothing changed`);
    return 2;
  }
  let account: BrandAccount | undefined;
  let keys: AccountKeys | undefined;
  try {
    if (a.command === 'set') {
      const input = await accountInputOf(a.connector, args);
      const checked = brandAccountSchema.safeParse(input);
      if (!checked.success) {
        for (const i of checked.error.issues) err(`${accountFieldOf(i.path, a.connector)}: ${i.message}`);
        err('nothing changed');
        return 2;
      }
      account = checked.data;
      if (a.id !== DEFAULT_BRAND_ID) refuseTheEnvironments(account, process.env);
      keys = accountKeysFromEnv(process.env);
    }
  } catch (e) {
    if (e instanceof BrandInputError) {
      err(`${e.field}: ${e.problem}; nothing changed`);
      return 2;
    }
    throw e;
  }
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('set DATABASE_URL to the database pixflow uses');
  const pool = createPool(databaseUrl, 2);
  try {
    return await runAccount(pool, a, account && keys ? { account, keys } : undefined);
  } catch (e) {
    if (e instanceof BrandInputError) {
      err(`${e.field}: ${e.problem}; nothing changed`);
      return 2;
    }
    if (e instanceof BrandNotFound) {
      err(`BRAND_ID: ${e.message} (npm run operator -- brand list shows them); nothing changed`);
      return 1;
    }
    if (e instanceof BrandAccountClash) {
      const options = ACCOUNT_OPTIONS[e.connector as BrandAccountConnector];
      const option =
        e.field === 'webhookSecret'
          ? 'webhook secret'
          : `--${(options.settings as Record<string, string>)[e.field]}`;
      err(
        `${option}: another brand's ${e.connector} account has it already (it tells which brand a notification is for); nothing changed`,
      );
      return 1;
    }
    throw e;
  } finally {
    await pool.end();
  }
}

function printAccount(
  brandId: string,
  account: StoredBrandAccount | undefined,
  connector: BrandAccountConnector,
) {
  if (!account) {
    out(
      brandId === DEFAULT_BRAND_ID
        ? `${connector}: none of its own: the environment's settings (the default brand's)`
        : `${connector}: none`,
    );
    return;
  }
  out(`${connector}: set ${account.createdAt}, updated ${account.updatedAt}`);
  const settings = account.settings as Record<string, unknown>;
  for (const field of Object.keys(ACCOUNT_OPTIONS[connector].settings)) {
    const value = settings[field];
    if (value !== undefined) out(`  ${`${SETTING_LABEL[field] ?? field}:`.padEnd(17)} ${String(value)}`);
  }
  const set = account.secretsSet as readonly string[];
  for (const field of Object.keys(ACCOUNT_OPTIONS[connector].secrets))
    out(`  ${`${SETTING_LABEL[field] ?? field}:`.padEnd(17)} ${set.includes(field) ? 'set' : '(not set)'}`);
}

async function runAccount(
  pool: Pool,
  a: z.infer<typeof accountCommandSchema>,
  toSet: { account: BrandAccount; keys: AccountKeys } | undefined,
): Promise<number> {
  switch (a.command) {
    case 'show': {
      if (!(await getBrand(pool, a.id))) throw new BrandNotFound(a.id);
      const accounts = (await listBrandAccounts(pool, a.id)).map((r) => storedBrandAccountSchema.parse(r));
      out(`brand ${a.id}'s connector accounts:`);
      for (const connector of BRAND_ACCOUNT_CONNECTORS)
        printAccount(
          a.id,
          accounts.find((r) => r.connector === connector),
          connector,
        );
      return 0;
    }
    case 'set': {
      if (!toSet) throw new Error('no account to set');
      const actor = await adminActor(pool, a.as);
      const sealed = sealBrandAccount(toSet.keys, a.id, toSet.account);
      const { account, created, changed } = await setBrandAccount(pool, actor, {
        ...sealed,
        settings: sealed.settings as Record<string, unknown>,
      });
      out(
        created
          ? `set brand ${a.id}'s ${a.connector} account`
          : changed
            ? `replaced brand ${a.id}'s ${a.connector} account`
            : `brand ${a.id}'s ${a.connector} account already reads so: nothing changed`,
      );
      printAccount(a.id, storedBrandAccountSchema.parse(account), a.connector);
      return 0;
    }
    case 'remove': {
      const actor = await adminActor(pool, a.as);
      if (!(await removeBrandAccount(pool, actor, a.id, a.connector))) {
        err(`CONNECTOR: brand ${a.id} has no ${a.connector} account; nothing changed`);
        return 1;
      }
      out(`removed brand ${a.id}'s ${a.connector} account`);
      return 0;
    }
  }
}
