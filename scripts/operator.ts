import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { isTimeZone } from '../backoffice/format';
import { hashPassword, MIN_PASSWORD_LENGTH } from '../common/passwords';
import {
  disableOperator,
  operatorLanguages,
  operatorRoles,
  saveOperator,
  setOperatorRole,
} from '../db/operators';
import { createPool } from '../db/pool';
import { runBrandCommand } from './operator-brands';
import { runGrantCommand } from './operator-grants';
import { runKeyCommand } from './operator-keys';
import { runPolicyCommand } from './operator-policy';

// Back-office operators for a real deployment:
//   DATABASE_URL=... npm run operator -- create --email ana@example.com --name "Ana" --role reviewer [--language en]
//   DATABASE_URL=... npm run operator -- reset --email ana@example.com
//   DATABASE_URL=... npm run operator -- role --email ana@example.com --role admin
//   DATABASE_URL=... npm run operator -- disable --email ana@example.com
//   DATABASE_URL=... npm run operator -- policy show|diff|set|approve|reject ... (scripts/operator-policy.ts)
//   DATABASE_URL=... npm run operator -- brand list|show|create|update ... (scripts/operator-brands.ts)
//   DATABASE_URL=... npm run operator -- grants|grant|revoke ... (the brands an operator sees: scripts/operator-grants.ts)
// reset, role and disable end every session the operator has (db/operators.ts). A password is
// read from standard input when one is piped in (--password-stdin); otherwise a strong one is
// generated and printed once.

const USAGE = `usage: npm run operator -- <create|reset|role|disable> --email ADDRESS [--name NAME]
       [--role viewer|reviewer|approver|admin] [--zone IANA_ZONE] [--language pt-BR|en] [--password-stdin]`;

const argsSchema = z
  .object({
    command: z.enum(['create', 'reset', 'role', 'disable']),
    email: z.email({ error: 'must be an email address' }),
    name: z.string().min(1).max(200).optional(),
    role: z.enum(operatorRoles).optional(),
    zone: z.string().refine(isTimeZone, 'is not an IANA time zone').optional(),
    language: z.enum(operatorLanguages).optional(),
    passwordStdin: z.boolean().default(false),
  })
  .refine((a) => a.command !== 'role' || a.role !== undefined, {
    path: ['role'],
    message: 'is needed to change the role',
  });

export const generatedPassword = () => randomBytes(18).toString('base64url');

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Creates (or with `replace`, resets) an operator; the password it was given or generated. */
export async function upsertOperator(
  databaseUrl: string,
  o: {
    email: string;
    name?: string;
    role?: (typeof operatorRoles)[number];
    zone?: string;
    language?: (typeof operatorLanguages)[number];
    password?: string;
  },
  replace: boolean,
): Promise<{ saved: boolean; password: string }> {
  const password = o.password ?? generatedPassword();
  if (password.length < MIN_PASSWORD_LENGTH)
    throw new Error(`the password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  const pool = createPool(databaseUrl, 1);
  try {
    const saved = await saveOperator(
      pool,
      {
        email: o.email,
        name: o.name,
        role: o.role,
        timeZone: o.zone,
        language: o.language,
        passwordHash: await hashPassword(password),
      },
      replace,
    );
    return { saved, password };
  } finally {
    await pool.end();
  }
}

async function main() {
  if (process.argv[2] === 'key') process.exit(await runKeyCommand(process.argv.slice(3)));
  if (process.argv[2] === 'policy') process.exit(await runPolicyCommand(process.argv.slice(3)));
  if (process.argv[2] === 'brand') process.exit(await runBrandCommand(process.argv.slice(3)));
  const grantCommand = process.argv[2];
  if (grantCommand === 'grants' || grantCommand === 'grant' || grantCommand === 'revoke')
    process.exit(await runGrantCommand(grantCommand, process.argv.slice(3)));
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      email: { type: 'string' },
      name: { type: 'string' },
      role: { type: 'string' },
      zone: { type: 'string' },
      language: { type: 'string' },
      'password-stdin': { type: 'boolean' },
    },
  });
  const parsed = argsSchema.safeParse({
    command: positionals[0],
    email: values.email,
    name: values.name,
    role: values.role,
    zone: values.zone,
    language: values.language,
    passwordStdin: values['password-stdin'],
  });
  if (!parsed.success) {
    for (const i of parsed.error.issues) process.stderr.write(`--${i.path.join('.')}: ${i.message}\n`);
    process.stderr.write(`${USAGE}\n`);
    process.exit(2);
  }
  const a = parsed.data;
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('set DATABASE_URL to the database pixflow uses');
  if (a.command === 'disable') {
    const pool = createPool(databaseUrl, 1);
    const done = await disableOperator(pool, a.email).finally(() => pool.end());
    process.stdout.write(
      done ? `${a.email} can no longer sign in\n` : `${a.email}: no such enabled operator\n`,
    );
    process.exit(done ? 0 : 1);
  }
  if (a.command === 'role' && a.role) {
    const pool = createPool(databaseUrl, 1);
    const done = await setOperatorRole(pool, a.email, a.role).finally(() => pool.end());
    process.stdout.write(done ? `${a.email} is now ${a.role}\n` : `${a.email}: no such enabled operator\n`);
    process.exit(done ? 0 : 1);
  }
  const given = a.passwordStdin ? await readStdin() : undefined;
  const { saved, password } = await upsertOperator(
    databaseUrl,
    { email: a.email, name: a.name, role: a.role, zone: a.zone, language: a.language, password: given },
    a.command === 'reset',
  );
  if (!saved) {
    process.stderr.write(`${a.email} exists already; use reset to set a new password or role\n`);
    process.exit(1);
  }
  process.stdout.write(
    `${a.command === 'create' ? 'created' : 'reset'} ${a.email}${a.role ? ` (${a.role})` : ''}\n`,
  );
  if (!given) process.stdout.write(`password (shown once): ${password}\n`);
}

if (require.main === module) {
  main().catch((err) => {
    process.stderr.write(`pixflow operator: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
