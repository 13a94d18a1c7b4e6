import { z } from 'zod';
import { brandIdSchema } from '../contracts/brand';
import {
  type BrandPolicyChangeRow,
  brandExists,
  getBrandPolicyVersion,
  latestBrandPolicyVersion,
  latestPolicyVersion,
  pendingBrandPolicyChanges,
} from '../db/policy';
import type { Pool } from '../db/pool';
import { checkedOverrides, withOverrides } from '../policy/brand';
import {
  approveBrandPolicyChange,
  type BrandFieldChange,
  brandChanges,
  proposeBrandPolicyChange,
  rejectBrandPolicyChange,
} from '../policy/brand-changes';
import { type PolicyActor, policyOfRow } from '../policy/changes';
import { parseAssignments, policyFields, shownValue } from '../policy/diff';

// A brand's rules (docs/policy.md, Rules of a brand; scripts/operator-policy.ts hands
// `policy ... --brand X` here): what the brand's flows decide under, and its overrides changed as
// the operator's policy is, with a reason, audited, four eyes on a loosening.

export const BRAND_POLICY_USAGE = `       npm run operator -- policy show --brand BRAND
       npm run operator -- policy diff [FROM_VERSION [TO_VERSION]] --brand BRAND
       npm run operator -- policy set PATH=VALUE... --brand BRAND --reason REASON --as ADMIN_EMAIL
       npm run operator -- policy inherit PATH... --brand BRAND --reason REASON --as ADMIN_EMAIL
       npm run operator -- policy approve CHANGE_ID --brand BRAND --as ADMIN_EMAIL
       npm run operator -- policy reject CHANGE_ID --brand BRAND --as ADMIN_EMAIL [--reason REASON]
A brand sets only its own flows' fields: the deposits' routing and breaker, the automatic return of
held deposits, the payouts' controls; inherit gives a field back to the operator's policy`;

const adminEmail = z.email({ error: 'must be the email address of an admin operator' });
const changeId = z.coerce.number({ error: 'must be a change id' }).int().min(1, 'must be a change id');
const reason = z
  .string({ error: 'is required: say why the rules change' })
  .trim()
  .min(1, 'is required: say why the rules change');
const brand = brandIdSchema;
/** A brand's version; 0 is the brand before it had rules of its own. */
const version = z.coerce
  .number({ error: 'must be a version number' })
  .int()
  .min(0, 'must be a version number');

export const brandCommandSchema = z.discriminatedUnion('command', [
  z.object({ command: z.literal('show'), brand }),
  z.object({ command: z.literal('diff'), brand, from: version.optional(), to: version.optional() }),
  z.object({
    command: z.literal('set'),
    brand,
    assignments: z.array(z.string()).min(1, 'name at least one PATH=VALUE'),
    reason,
    as: adminEmail,
  }),
  z.object({
    command: z.literal('inherit'),
    brand,
    paths: z.array(z.string()).min(1, 'name at least one PATH'),
    reason,
    as: adminEmail,
  }),
  z.object({ command: z.literal('approve'), brand, id: changeId, as: adminEmail }),
  z.object({
    command: z.literal('reject'),
    brand,
    id: changeId,
    as: adminEmail,
    reason: z.string().optional(),
  }),
]);

export type BrandCommand = z.infer<typeof brandCommandSchema>;

/** What the positionals and options say, per command. */
export function brandCommandOf(
  positionals: string[],
  values: { brand?: string; reason?: string; as?: string },
) {
  const [command, ...rest] = positionals;
  const { brand: b, reason: r, as } = values;
  switch (command) {
    case 'diff':
      return { command, brand: b, from: rest[0], to: rest[1] };
    case 'set':
      return { command, brand: b, assignments: rest, reason: r, as };
    case 'inherit':
      return { command, brand: b, paths: rest, reason: r, as };
    case 'approve':
    case 'reject':
      return { command, brand: b, id: rest[0], as, reason: r };
    default:
      return { command, brand: b };
  }
}

const out = (line: string) => process.stdout.write(`${line}\n`);
const err = (line: string) => process.stderr.write(`${line}\n`);

/** A brand's diff as lines: `path: old → new`, whose each side is, a loosening marked. */
export function brandDiffLines(brandId: string, changes: readonly BrandFieldChange[]): string[] {
  const owner = (override: boolean) => (override ? `${brandId}'s` : "the operator's");
  return changes.map(
    (c) =>
      `  ${c.path}: ${shownValue(c.old)} (${owner(c.wasOverride)}) → ${shownValue(c.new)} (${owner(c.override)})${c.loosens ? '  (loosens: needs a second admin)' : ''}`,
  );
}

async function printPending(pool: Pool, brandId: string, pending: BrandPolicyChangeRow[]) {
  const operator = await latestPolicyVersion(pool);
  const current = await latestBrandPolicyVersion(pool, brandId);
  for (const change of pending) {
    out(
      `change ${change.id}, proposed by ${change.proposedBy} at ${change.proposedAt} over brand ${brandId}'s version ${change.baseVersion} and the operator's version ${change.baseOperatorVersion}: "${change.reason}"`,
    );
    if (operator)
      for (const line of brandDiffLines(
        brandId,
        brandChanges(
          policyOfRow(operator),
          current ? checkedOverrides(current.overrides) : {},
          checkedOverrides(change.overrides),
        ),
      ))
        out(line);
    out(`  approve: npm run operator -- policy approve ${change.id} --brand ${brandId} --as <another admin>`);
  }
}

async function show(pool: Pool, brandId: string): Promise<number> {
  const operator = await latestPolicyVersion(pool);
  if (!operator) {
    err('no policy version yet: the API or a worker seeds version 1 from its environment when it starts');
    return 1;
  }
  const own = await latestBrandPolicyVersion(pool, brandId);
  const overrides = own ? checkedOverrides(own.overrides) : {};
  out(
    own
      ? `brand ${brandId}: the operator's version ${operator.version} with brand ${brandId}'s version ${own.version}, ${own.createdAt}, by ${own.changedBy}${own.approvedBy ? `, approved by ${own.approvedBy}` : ''}: "${own.reason}"`
      : `brand ${brandId}: the operator's version ${operator.version}, with no rules of its own`,
  );
  for (const [path, value] of policyFields(withOverrides(policyOfRow(operator), overrides)))
    out(`  ${path} = ${shownValue(value)}${path in overrides ? `  (${brandId}'s)` : ''}`);
  const pending = await pendingBrandPolicyChanges(pool, brandId);
  if (pending.length) out(`${pending.length} change(s) of brand ${brandId} waiting for a second admin:`);
  await printPending(pool, brandId, pending);
  return 0;
}

/**
 * What brand version `to` (default: the newest) changed from `from` (default: the one before; 0
 * is the brand without rules of its own), laid on the operator's version in force.
 */
async function diff(pool: Pool, brandId: string, from?: number, to?: number): Promise<number> {
  const [operator, newest] = await Promise.all([
    latestPolicyVersion(pool),
    latestBrandPolicyVersion(pool, brandId),
  ]);
  if (!operator || !newest) {
    out(`brand ${brandId} has no rules of its own: the operator's policy applies`);
    return 0;
  }
  const upTo = to ?? newest.version;
  const since = from ?? upTo - 1;
  const overridesAt = async (v: number) => {
    if (v === 0) return {};
    const row = await getBrandPolicyVersion(pool, brandId, v);
    return row ? checkedOverrides(row.overrides) : undefined;
  };
  const [older, newer] = await Promise.all([overridesAt(since), overridesAt(upTo)]);
  if (!older || !newer) {
    err(`no version ${older ? upTo : since} of brand ${brandId} (the newest is ${newest.version})`);
    return 1;
  }
  out(`brand ${brandId}'s version ${since} → ${upTo}, over the operator's version ${operator.version}:`);
  const changes = brandChanges(policyOfRow(operator), older, newer);
  for (const line of changes.length ? brandDiffLines(brandId, changes) : ['  (no change)']) out(line);
  return 0;
}

/** Runs a `policy <command> --brand X` already checked; the exit code. */
export async function runBrandPolicy(
  pool: Pool,
  a: BrandCommand,
  adminActor: (email: string) => Promise<PolicyActor>,
): Promise<number> {
  if (a.command === 'show' || a.command === 'diff') {
    if (!(await brandExists(pool, a.brand))) {
      err(`no brand ${a.brand}`);
      return 1;
    }
    return a.command === 'show' ? show(pool, a.brand) : diff(pool, a.brand, a.from, a.to);
  }
  const actor = await adminActor(a.as);
  switch (a.command) {
    case 'set':
    case 'inherit': {
      const outcome = await proposeBrandPolicyChange(pool, actor, {
        brand: a.brand,
        set: a.command === 'set' ? parseAssignments(a.assignments) : [],
        inherit: a.command === 'inherit' ? a.paths : [],
        reason: a.reason,
      });
      for (const line of brandDiffLines(a.brand, outcome.changes)) out(line);
      if (outcome.kind === 'applied')
        out(`applied: brand ${a.brand}'s version ${outcome.version} is in force`);
      else
        out(
          `waits for a second admin: change ${outcome.changeId} (npm run operator -- policy approve ${outcome.changeId} --brand ${a.brand} --as <another admin>)`,
        );
      return 0;
    }
    case 'approve': {
      const { version, changes } = await approveBrandPolicyChange(pool, actor, a.brand, a.id);
      for (const line of brandDiffLines(a.brand, changes)) out(line);
      out(`approved: brand ${a.brand}'s version ${version} is in force`);
      return 0;
    }
    case 'reject': {
      await rejectBrandPolicyChange(pool, actor, a.brand, a.id, a.reason);
      out(`rejected: change ${a.id} will not apply`);
      return 0;
    }
  }
}

/** A bad option of a brand's command, as the CLI names it. */
export const brandOptionName = (name: string) =>
  ['reason', 'as', 'brand'].includes(name) ? `--${name}` : name;
