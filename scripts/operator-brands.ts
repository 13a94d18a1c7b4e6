import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  type Brand,
  brandIdSchema,
  brandPatchSchema,
  brandSchema,
  formatCnpj,
  newBrandSchema,
} from '../contracts/brand';
import { BrandExists, BrandNotFound, createBrand, getBrand, listBrands, updateBrand } from '../db/brands';
import { createPool, type Pool } from '../db/pool';
import { adminActor, adminEmail, BrandInputError } from './operator-admin';
import { runBrandAccountCommand } from './operator-brand-accounts';

// The brands for a real deployment (docs/brands.md; scripts/operator.ts hands `brand ...` here):
//   DATABASE_URL=... npm run operator -- brand list
//   DATABASE_URL=... npm run operator -- brand show bet-rio
//   DATABASE_URL=... npm run operator -- brand create bet-rio --name "Bet Rio" [--legal-name ... --cnpj ... --authorization ...] --as admin@example.com
//   DATABASE_URL=... npm run operator -- brand update bet-rio --cnpj 11.222.333/0001-81 --as admin@example.com
// Creating and changing a brand is an admin's, named by --as, and in the audit trail.

export const BRAND_USAGE = `usage: npm run operator -- brand list
       npm run operator -- brand show BRAND_ID
       npm run operator -- brand create BRAND_ID --name NAME [--legal-name NAME] [--cnpj CNPJ]
                          [--authorization TEXT] --as ADMIN_EMAIL
       npm run operator -- brand update BRAND_ID [--name NAME] [--legal-name NAME] [--cnpj CNPJ]
                          [--authorization TEXT] --as ADMIN_EMAIL
BRAND_ID is 2 to 40 lower-case letters, digits or hyphens, starting with a letter (e.g. bet-rio);
CNPJ is 14 characters (12 letters or digits, then 2 check digits), with or without punctuation;
--authorization names the SPA/MF authorization the operator trades under
(e.g. "Portaria SPA/MF nº 1.234/2024");
npm run operator -- brand account ... manages a brand's connector accounts`;

const commandSchema = z.discriminatedUnion(
  'command',
  [
    z.object({ command: z.literal('list') }),
    z.object({ command: z.literal('show'), id: brandIdSchema }),
    z.object({ command: z.literal('create'), brand: newBrandSchema, as: adminEmail }),
    z.object({ command: z.literal('update'), id: brandIdSchema, patch: brandPatchSchema, as: adminEmail }),
  ],
  { error: 'must be list, show, create or update' },
);

/** An option's name on the command line, from a path zod names. */
const OPTION_OF: Record<string, string> = {
  name: '--name',
  legalName: '--legal-name',
  cnpj: '--cnpj',
  authorization: '--authorization',
  as: '--as',
};

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

const parseBrandArgs = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      'legal-name': { type: 'string' },
      cnpj: { type: 'string' },
      authorization: { type: 'string' },
      as: { type: 'string' },
    },
  });

/** What the positionals and options say, per command. */
function commandOf(args: ReturnType<typeof parseBrandArgs>) {
  const [command, id] = args.positionals;
  const v = args.values;
  const fields = { name: v.name, legalName: v['legal-name'], cnpj: v.cnpj, authorization: v.authorization };
  switch (command) {
    case 'show':
      return { command, id };
    case 'create':
      return { command, brand: { id, ...fields }, as: v.as };
    case 'update':
      return { command, id, patch: fields, as: v.as };
    default:
      return { command };
  }
}

/** The field a zod issue is about, as the command line names it. */
function fieldOf(path: readonly PropertyKey[]): string {
  const last = String(path.at(-1) ?? 'command');
  if (last === 'id' || last === 'brand') return 'BRAND_ID';
  if (last === 'patch') return 'update';
  return OPTION_OF[last] ?? last;
}

function printBrand(b: Brand) {
  out(`${b.id}: ${b.name}`);
  out(`  legal name:    ${b.legalName ?? '(not set)'}`);
  out(`  CNPJ:          ${b.cnpj ? formatCnpj(b.cnpj) : '(not set)'}`);
  out(`  authorization: ${b.authorization ?? '(not set)'}`);
  out(`  created ${b.createdAt}, updated ${b.updatedAt}`);
}

/** Runs `brand <command> ...`; the exit code. */
export async function runBrandCommand(argv: string[]): Promise<number> {
  if (argv[0] === 'account') return runBrandAccountCommand(argv.slice(1));
  let args: ReturnType<typeof parseBrandArgs>;
  try {
    args = parseBrandArgs(argv);
  } catch (e) {
    err(`${(e as Error).message}\n${BRAND_USAGE}`);
    return 2;
  }
  const parsed = commandSchema.safeParse(commandOf(args));
  if (!parsed.success) {
    for (const i of parsed.error.issues) err(`${fieldOf(i.path)}: ${i.message}`);
    err(BRAND_USAGE);
    return 2;
  }
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('set DATABASE_URL to the database pixflow uses');
  const pool = createPool(databaseUrl, 2);
  try {
    return await run(pool, parsed.data);
  } catch (e) {
    if (e instanceof BrandInputError) {
      err(`${e.field}: ${e.problem}; nothing changed`);
      return 2;
    }
    if (e instanceof BrandExists) {
      err(
        `BRAND_ID: ${e.message} (npm run operator -- brand update ${e.id} ... changes it); nothing changed`,
      );
      return 1;
    }
    if (e instanceof BrandNotFound) {
      err(`BRAND_ID: ${e.message} (npm run operator -- brand list shows them); nothing changed`);
      return 1;
    }
    throw e;
  } finally {
    await pool.end();
  }
}

async function run(pool: Pool, a: z.infer<typeof commandSchema>): Promise<number> {
  switch (a.command) {
    case 'list': {
      for (const b of await listBrands(pool)) {
        const row = brandSchema.parse(b);
        const operator = [row.legalName, row.cnpj && `CNPJ ${formatCnpj(row.cnpj)}`].filter(Boolean);
        out(`${row.id}\t${row.name}${operator.length ? `\t${operator.join(', ')}` : ''}`);
      }
      return 0;
    }
    case 'show': {
      const found = await getBrand(pool, a.id);
      if (!found) throw new BrandNotFound(a.id);
      printBrand(brandSchema.parse(found));
      return 0;
    }
    case 'create': {
      const actor = await adminActor(pool, a.as);
      const created = await createBrand(pool, actor, a.brand);
      out(`created brand ${created.id}`);
      printBrand(brandSchema.parse(created));
      return 0;
    }
    case 'update': {
      const actor = await adminActor(pool, a.as);
      const { brand, changed } = await updateBrand(pool, actor, a.id, a.patch);
      out(changed ? `updated brand ${brand.id}` : `brand ${brand.id} already reads so: nothing changed`);
      printBrand(brandSchema.parse(brand));
      return 0;
    }
  }
}

// A brand's connector accounts (docs/brands.md, Connector accounts):
//   DATABASE_URL=... CODEC_KEYS=... CODEC_ACTIVE_KEY_ID=... PII_HASH_KEY=... npm run operator -- \
//     brand account set bet-rio identity-payments --base-url ... --auth-url ... --client-id ... \
//     --merchant ... --partner-id ... --client-secret-file F --api-key-file F --webhook-secret-file F --as admin@example.com
//   DATABASE_URL=... npm run operator -- brand account show bet-rio
//   DATABASE_URL=... npm run operator -- brand account remove bet-rio api-pix --as admin@example.com
// A secret is read from a file or standard input, never from the command line (where ps and the
// shell's history would show it), and never printed. The secrets are sealed with the codec's keys
// and hashed with PII_HASH_KEY, so the CLI needs the API's and the worker's values of them.
