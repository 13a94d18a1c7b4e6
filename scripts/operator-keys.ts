import os from 'node:os';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  createKey,
  type KeyActor,
  KeyBrandNotFound,
  listKeys,
  revokeKey,
  rotateKey,
  statusOf,
} from '../api-keys/admin';
import { durationSchema, keyIdSchema, keyNameSchema, scopeSchema } from '../common/api-key';
import { brandIdSchema, DEFAULT_BRAND_ID } from '../contracts/brand';
import { createPool } from '../db/pool';

// API keys for a real deployment (scripts/operator.ts hands `key ...` here):
//   DATABASE_URL=... npm run operator -- key create --name "Checkout backend" --scopes deposits:write,customers:read [--brand bet-rio | --platform]
//   DATABASE_URL=... npm run operator -- key list
//   DATABASE_URL=... npm run operator -- key rotate --id ak_0123456789abcdef [--overlap 1h]
//   DATABASE_URL=... npm run operator -- key revoke --id ak_0123456789abcdef
// A new secret is printed once; Postgres keeps its SHA-256. Every change is in the audit trail.
// A key acts for one brand (the default brand unless --brand names another), or with --platform
// for whichever brand each request names in Pixflow-Brand (docs/brands.md).
// Every API process applies a change within API_KEY_CACHE_MS (5 s by default), no restart.

export const KEY_USAGE = `usage: npm run operator -- key create --name NAME --scopes SCOPE[,SCOPE...] [--brand BRAND_ID | --platform] [--expires 90d|ISO_TIME]
       npm run operator -- key list
       npm run operator -- key rotate --id KEY_ID [--overlap 1h]
       npm run operator -- key revoke --id KEY_ID
scopes: onboardings, deposits, withdrawals, customers, events, webhooks, each :read or :write
(write includes read)
--brand: the brand the key acts for (default: ${DEFAULT_BRAND_ID}); --platform: a key of no brand,
which names the brand it acts for on each request in the Pixflow-Brand header`;

const expiresSchema = z
  .union([
    durationSchema.transform((ms) => new Date(Date.now() + ms)),
    z.iso
      .datetime({ offset: true, error: 'must be a duration (90d, 12h, 30m) or an ISO time' })
      .transform((v) => new Date(v)),
  ])
  .refine((d) => d.getTime() > Date.now(), 'must be in the future');

const scopeListSchema = z
  .string()
  .transform((v) =>
    v
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  )
  .pipe(z.array(scopeSchema).min(1, 'must name at least one scope'));

const commandSchema = z.discriminatedUnion('command', [
  z
    .object({
      command: z.literal('create'),
      name: keyNameSchema,
      scopes: scopeListSchema,
      brand: brandIdSchema.optional(),
      platform: z.boolean().default(false),
      expires: expiresSchema.optional(),
    })
    .refine((a) => !(a.platform && a.brand !== undefined), {
      path: ['platform'],
      error: 'a platform key has no brand of its own: give --brand or --platform, not both',
    }),
  z.object({ command: z.literal('list') }),
  z.object({ command: z.literal('rotate'), id: keyIdSchema, overlap: durationSchema.default(0) }),
  z.object({ command: z.literal('revoke'), id: keyIdSchema }),
]);

/** Who the audit trail names for the CLI: it has no operator account, so the system user. */
function cliActor(): KeyActor {
  let user = 'unknown';
  try {
    user = os.userInfo().username;
  } catch {}
  return { operatorId: null, operatorEmail: `operator-cli:${user}`, operatorRole: null };
}

/** How a key's brand is named: `brand bet-rio`, or the platform for a key of none. */
const brandLabel = (brand: string | null) =>
  brand === null ? 'the platform (Pixflow-Brand names the brand on each request)' : `brand ${brand}`;

const out = (line: string) => process.stdout.write(`${line}\n`);

const parseKeyArgs = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      brand: { type: 'string' },
      platform: { type: 'boolean' },
      expires: { type: 'string' },
      id: { type: 'string' },
      overlap: { type: 'string' },
    },
  });

/** Runs `key <command> ...`; the exit code. */
export async function runKeyCommand(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parseKeyArgs>;
  try {
    args = parseKeyArgs(argv);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n${KEY_USAGE}\n`);
    return 2;
  }
  const parsed = commandSchema.safeParse({ command: args.positionals[0], ...args.values });
  if (!parsed.success) {
    for (const i of parsed.error.issues) {
      process.stderr.write(`${i.path.length ? `--${i.path.join('.')}` : 'command'}: ${i.message}\n`);
    }
    process.stderr.write(`${KEY_USAGE}\n`);
    return 2;
  }
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('set DATABASE_URL to the database pixflow uses');
  const pool = createPool(databaseUrl, 1);
  try {
    const a = parsed.data;
    switch (a.command) {
      case 'create': {
        let created: Awaited<ReturnType<typeof createKey>>;
        try {
          created = await createKey(pool, cliActor(), {
            name: a.name,
            scopes: a.scopes,
            brand: a.platform ? null : (a.brand ?? DEFAULT_BRAND_ID),
            expiresAt: a.expires ?? null,
          });
        } catch (err) {
          if (!(err instanceof KeyBrandNotFound)) throw err;
          process.stderr.write(`--brand: no brand ${err.brand} (npm run operator -- brand list)\n`);
          return 1;
        }
        const { key, secret } = created;
        out(
          `created ${key.id} "${key.name}" (${key.scopes.join(', ')}) for ${brandLabel(key.brandId)}, expires ${key.expiresAt ?? 'never'}`,
        );
        out(`key (shown once): ${secret}`);
        return 0;
      }
      case 'list': {
        const keys = await listKeys(pool);
        if (keys.length === 0) out('no API key records (keys from API_KEYS are not listed)');
        for (const k of keys) {
          out(
            [
              k.id,
              k.prefix,
              statusOf(k),
              k.scopes.join(','),
              k.brandId ?? 'platform',
              `"${k.name}"`,
              `created ${k.createdAt}`,
              `last used ${k.lastUsedAt ?? 'never'}`,
              `expires ${k.expiresAt ?? 'never'}`,
              ...(k.revokedAt ? [`revoked ${k.revokedAt}`] : []),
            ].join('  '),
          );
        }
        return 0;
      }
      case 'rotate': {
        const rotated = await rotateKey(pool, cliActor(), a.id, a.overlap);
        if (!rotated) {
          process.stderr.write(`${a.id}: no such key, or it is revoked\n`);
          return 1;
        }
        const until = rotated.key.previousSecretUntil;
        out(
          `rotated ${a.id}: ${until ? `the previous secret works until ${until}` : 'the previous secret no longer works'}`,
        );
        out(`key (shown once): ${rotated.secret}`);
        return 0;
      }
      case 'revoke': {
        const revoked = await revokeKey(pool, cliActor(), a.id);
        if (!revoked) {
          process.stderr.write(`${a.id}: no such key, or it is revoked already\n`);
          return 1;
        }
        out(`revoked ${a.id} "${revoked.name}" at ${revoked.revokedAt}`);
        return 0;
      }
    }
  } finally {
    await pool.end();
  }
}
