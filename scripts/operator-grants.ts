import { parseArgs } from 'node:util';
import { z } from 'zod';
import { brandIdSchema } from '../contracts/brand';
import { changeGrant, GrantTargetNotFound, listOperatorGrants } from '../db/operator-brands';
import { createPool } from '../db/pool';
import { adminActor, adminEmail, BrandInputError } from './operator-admin';

// Which brands each back-office operator sees and decides (docs/brands.md, "Operators and their
// brands"; scripts/operator.ts hands `grant`, `revoke` and `grants` here):
//   DATABASE_URL=... npm run operator -- grants [--email ana@example.com]
//   DATABASE_URL=... npm run operator -- grant --email ana@example.com --brand bet-rio --as admin@example.com
//   DATABASE_URL=... npm run operator -- revoke --email ana@example.com --brand default --as admin@example.com
// Granting and revoking are an admin's, named by --as, and in the audit trail. Admins see every
// brand whatever is granted to them.

export const GRANT_USAGE = `usage: npm run operator -- grants [--email ADDRESS]
       npm run operator -- grant --email ADDRESS --brand BRAND_ID --as ADMIN_EMAIL
       npm run operator -- revoke --email ADDRESS --brand BRAND_ID --as ADMIN_EMAIL`;

const email = z.email({ error: 'must be an email address' });

const commandSchema = z.discriminatedUnion(
  'command',
  [
    z.object({ command: z.literal('grants'), email: email.optional() }),
    z.object({ command: z.enum(['grant', 'revoke']), email, brand: brandIdSchema, as: adminEmail }),
  ],
  { error: 'must be grants, grant or revoke' },
);

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

/** Runs `grants`, `grant` or `revoke`: the exit code (2 for bad input, 1 for what does not exist). */
export async function runGrantCommand(command: string, argv: string[]): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: { email: { type: 'string' }, brand: { type: 'string' }, as: { type: 'string' } },
    }).values;
  } catch (e) {
    err(e instanceof Error ? e.message : String(e));
    err(GRANT_USAGE);
    return 2;
  }
  const parsed = commandSchema.safeParse({ command, ...values });
  if (!parsed.success) {
    for (const i of parsed.error.issues) err(`--${i.path.join('.') || 'command'}: ${i.message}`);
    err(GRANT_USAGE);
    return 2;
  }
  const a = parsed.data;
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('set DATABASE_URL to the database pixflow uses');
  const pool = createPool(databaseUrl, 1);
  try {
    if (a.command === 'grants') {
      const rows = (await listOperatorGrants(pool)).filter(
        (o) => !a.email || o.email === a.email.toLowerCase(),
      );
      if (a.email && !rows.length) {
        err(`${a.email}: no such operator`);
        return 1;
      }
      for (const o of rows)
        out(
          `${o.email}\t${o.role}\t${o.role === 'admin' ? 'every brand (admin)' : o.brands.join(',') || '(none)'}`,
        );
      return 0;
    }
    const actor = await adminActor(pool, a.as);
    const grant = a.command === 'grant';
    const { changed, brands } = await changeGrant(pool, actor, { email: a.email, brand: a.brand, grant });
    out(
      `${changed ? (grant ? 'granted' : 'revoked') : 'unchanged:'} ${a.brand} ${grant ? 'to' : 'from'} ${a.email}; ` +
        `their brands: ${brands.join(',') || '(none)'}`,
    );
    return 0;
  } catch (e) {
    if (e instanceof BrandInputError) {
      err(e.message);
      return 2;
    }
    if (e instanceof GrantTargetNotFound) {
      err(
        e.what === 'operator'
          ? `${a.email}: no such operator`
          : `--brand: no brand ${'brand' in a ? a.brand : ''}`,
      );
      return 1;
    }
    throw e;
  } finally {
    await pool.end();
  }
}
