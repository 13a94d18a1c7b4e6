import { parseArgs } from 'node:util';
import { z } from 'zod';
import {
  getPolicyVersion,
  latestPolicyVersion,
  type PolicyChangeRow,
  pendingPolicyChanges,
} from '../db/policy';
import { createPool, type Pool } from '../db/pool';
import {
  approvePolicyChange,
  changesOf,
  type PolicyActor,
  PolicyChangeRefused,
  policyOfRow,
  proposeAssignments,
  rejectPolicyChange,
} from '../policy/changes';
import {
  diffPolicies,
  type PolicyFieldChange,
  PolicyInputError,
  policyFields,
  shownValue,
} from '../policy/diff';
import { enabledAdmin, NOT_AN_ADMIN } from './operator-admin';
import {
  BRAND_POLICY_USAGE,
  brandCommandOf,
  brandCommandSchema,
  brandOptionName,
  runBrandPolicy,
} from './operator-brand-policy';

// The rules policy for a real deployment (docs/policy.md; scripts/operator.ts hands `policy ...` here):
//   DATABASE_URL=... npm run operator -- policy show
//   DATABASE_URL=... npm run operator -- policy diff [FROM [TO]]
//   DATABASE_URL=... npm run operator -- policy set withdrawals.dailyLimitCentavos=2000000 --reason "..." --as admin@example.com
//   DATABASE_URL=... npm run operator -- policy approve 12 --as other-admin@example.com
//   DATABASE_URL=... npm run operator -- policy reject 12 --as admin@example.com [--reason "..."]
//   ... and with --brand X, a brand's rules (scripts/operator-brand-policy.ts)
// A change that loosens a money limit waits for a second, different admin; every change is in the
// audit trail under the admin named by --as (an enabled admin operator). Every process applies a
// new version within seconds, no restart.

export const POLICY_USAGE = `usage: npm run operator -- policy show
       npm run operator -- policy diff [FROM_VERSION [TO_VERSION]]
       npm run operator -- policy set PATH=VALUE... --reason REASON --as ADMIN_EMAIL
       npm run operator -- policy approve CHANGE_ID --as ADMIN_EMAIL
       npm run operator -- policy reject CHANGE_ID --as ADMIN_EMAIL [--reason REASON]
${BRAND_POLICY_USAGE}
PATH is a field of the policy (policy show lists them), e.g. withdrawals.dailyLimitCentavos=2000000,
payouts.deadlineMs=90m, deposits.holdThirdParty=false`;

const version = z.coerce
  .number({ error: 'must be a version number' })
  .int()
  .min(1, 'must be a version number');
const changeId = z.coerce.number({ error: 'must be a change id' }).int().min(1, 'must be a change id');
const adminEmail = z.email({ error: 'must be the email address of an admin operator' });

const commandSchema = z.discriminatedUnion('command', [
  z.object({ command: z.literal('show') }),
  z.object({ command: z.literal('diff'), from: version.optional(), to: version.optional() }),
  z.object({
    command: z.literal('set'),
    assignments: z.array(z.string()).min(1, 'name at least one PATH=VALUE'),
    reason: z
      .string({ error: 'is required: say why the rules change' })
      .trim()
      .min(1, 'is required: say why the rules change'),
    as: adminEmail,
  }),
  z.object({ command: z.literal('approve'), id: changeId, as: adminEmail }),
  z.object({ command: z.literal('reject'), id: changeId, as: adminEmail, reason: z.string().optional() }),
]);

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

/** A diff as lines: `path: old → new`, a loosening marked. */
export function diffLines(changes: readonly PolicyFieldChange[]): string[] {
  return changes.map(
    (c) =>
      `  ${c.path}: ${shownValue(c.old)} → ${shownValue(c.new)}${c.loosens ? '  (loosens: needs a second admin)' : ''}`,
  );
}

/** The admin --as names: an enabled operator with the admin role, as the audit trail names them. */
async function adminActor(pool: Pool, email: string): Promise<PolicyActor> {
  const admin = await enabledAdmin(pool, email);
  if (!admin) throw new PolicyInputError('--as', NOT_AN_ADMIN(email));
  return admin;
}

async function printPending(pool: Pool, pending: PolicyChangeRow[]) {
  for (const change of pending) {
    const base = await getPolicyVersion(pool, change.baseVersion);
    out(
      `change ${change.id}, proposed by ${change.proposedBy} at ${change.proposedAt} over version ${change.baseVersion}: "${change.reason}"`,
    );
    if (base) for (const line of diffLines(changesOf(base, change))) out(line);
    out(`  approve: npm run operator -- policy approve ${change.id} --as <another admin>`);
  }
}

const parsePolicyArgs = (argv: string[]) =>
  parseArgs({
    args: argv,
    allowPositionals: true,
    options: { reason: { type: 'string' }, as: { type: 'string' }, brand: { type: 'string' } },
  });

/** What the positionals and options say, per command. */
function commandOf(args: ReturnType<typeof parsePolicyArgs>) {
  const [command, ...rest] = args.positionals;
  const { reason, as } = args.values;
  switch (command) {
    case 'diff':
      return { command, from: rest[0], to: rest[1] };
    case 'set':
      return { command, assignments: rest, reason, as };
    case 'approve':
    case 'reject':
      return { command, id: rest[0], as, reason };
    default:
      return { command };
  }
}

/** Runs `policy <command> ...`; the exit code. */
export async function runPolicyCommand(argv: string[]): Promise<number> {
  let args: ReturnType<typeof parsePolicyArgs>;
  try {
    args = parsePolicyArgs(argv);
  } catch (e) {
    err(`${(e as Error).message}\n${POLICY_USAGE}`);
    return 2;
  }
  // A brand's rules when --brand names one; the operator's policy otherwise.
  const parsed =
    args.values.brand === undefined
      ? commandSchema.safeParse(commandOf(args))
      : brandCommandSchema.safeParse(brandCommandOf(args.positionals, args.values));
  if (!parsed.success) {
    for (const i of parsed.error.issues)
      err(`${brandOptionName(String(i.path[0] ?? 'command'))}: ${i.message}`);
    err(POLICY_USAGE);
    return 2;
  }
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) throw new Error('set DATABASE_URL to the database pixflow uses');
  const pool = createPool(databaseUrl, 2);
  const command = parsed.data;
  try {
    return 'brand' in command
      ? await runBrandPolicy(pool, command, (email) => adminActor(pool, email))
      : await run(pool, command);
  } catch (e) {
    if (e instanceof PolicyInputError) {
      err(`${e.field}: ${e.problem}; nothing changed`);
      return 2;
    }
    if (e instanceof PolicyChangeRefused) {
      err(`${e.message}; nothing changed`);
      return 1;
    }
    throw e;
  } finally {
    await pool.end();
  }
}

async function run(pool: Pool, a: z.infer<typeof commandSchema>): Promise<number> {
  const current = await latestPolicyVersion(pool);
  if (!current) {
    err('no policy version yet: the API or a worker seeds version 1 from its environment when it starts');
    return 1;
  }
  switch (a.command) {
    case 'show': {
      out(
        `version ${current.version}, ${current.createdAt}, by ${current.changedBy}${current.approvedBy ? `, approved by ${current.approvedBy}` : ''}: "${current.reason}"`,
      );
      for (const [path, value] of policyFields(policyOfRow(current))) out(`  ${path} = ${shownValue(value)}`);
      const pending = await pendingPolicyChanges(pool);
      if (pending.length) out(`${pending.length} change(s) waiting for a second admin:`);
      await printPending(pool, pending);
      return 0;
    }
    case 'diff': {
      const to = a.to ?? current.version;
      const from = a.from ?? to - 1;
      if (from < 1) {
        out('version 1 is the first: nothing before it');
        return 0;
      }
      const [older, newer] = await Promise.all([getPolicyVersion(pool, from), getPolicyVersion(pool, to)]);
      if (!older || !newer) {
        err(`no version ${older ? to : from} (the newest is ${current.version})`);
        return 1;
      }
      out(`version ${from} → ${to}:`);
      const changes = diffPolicies(policyOfRow(older), policyOfRow(newer));
      for (const line of changes.length ? diffLines(changes) : ['  (no change)']) out(line);
      if (a.from === undefined) await printPending(pool, await pendingPolicyChanges(pool));
      return 0;
    }
    case 'set': {
      const actor = await adminActor(pool, a.as);
      const outcome = await proposeAssignments(pool, actor, {
        current,
        assignments: a.assignments,
        reason: a.reason,
      });
      for (const line of diffLines(outcome.changes)) out(line);
      if (outcome.kind === 'applied') out(`applied: version ${outcome.version} is in force`);
      else
        out(
          `waits for a second admin: change ${outcome.changeId} (npm run operator -- policy approve ${outcome.changeId} --as <another admin>)`,
        );
      return 0;
    }
    case 'approve': {
      const actor = await adminActor(pool, a.as);
      const { version: v, changes } = await approvePolicyChange(pool, actor, a.id);
      for (const line of diffLines(changes)) out(line);
      out(`approved: version ${v} is in force`);
      return 0;
    }
    case 'reject': {
      const actor = await adminActor(pool, a.as);
      await rejectPolicyChange(pool, actor, a.id, a.reason);
      out(`rejected: change ${a.id} will not apply`);
      return 0;
    }
  }
}
