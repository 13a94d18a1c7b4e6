import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logger';
import { hashPassword } from '../../common/passwords';
import { createBrand } from '../../db/brands';
import { migrate } from '../../db/migrate';
import { listActions } from '../../db/operator-actions';
import { saveOperator } from '../../db/operators';
import {
  latestBrandPolicyVersion,
  latestPolicyVersion,
  listBrandPolicyVersions,
  pendingBrandPolicyChanges,
} from '../../db/policy';
import { createPool, type Pool } from '../../db/pool';
import { proposeBrandPolicyChange } from '../../policy/brand-changes';
import { type PolicyActor, PolicyChangeRefused, proposeAssignments } from '../../policy/changes';
import { PolicyInputError } from '../../policy/diff';
import { type PolicyStore, startPolicyStore } from '../../policy/store';
import { defaultPolicy } from '../helpers/policy';
import { freshDatabase } from '../helpers/postgres';
import { waitUntil } from '../helpers/wait';

// A brand's rules over the operator's policy, on a real Postgres: what its flows decide under, as
// every process's store reads it (the brand's overrides laid on the operator's version in force),
// changed with the CLI as an admin runs it, four eyes on a loosening, the person's rules refused.

const ROOT = path.resolve(__dirname, '../..');
const log = createLogger('brand-policy-test', 'silent');
const tag = randomBytes(3).toString('hex');
const B = `bet-${tag}`;
const ANA = 'ana.admin@pixflow.local';
const BIA = 'bia.admin@pixflow.local';
const ana: PolicyActor = { operatorId: null, operatorEmail: ANA, operatorRole: 'admin' };

let databaseUrl: string;
let pool: Pool;
const stores: PolicyStore[] = [];
const pools: Pool[] = [];

function policyCli(...args: string[]) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/operator.ts'), 'policy', ...args],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' },
  );
  return { status: r.status, out: r.stdout, err: r.stderr };
}

/** A process's store on its own pool, hearing new versions only by notification (a minute's look). */
function processStore(): PolicyStore {
  const own = createPool(databaseUrl, 2);
  const store = startPolicyStore({ pool: own, seed: defaultPolicy(), log, refreshMs: 60_000 });
  stores.push(store);
  pools.push(own);
  return store;
}

const auditRows = async () => (await pool.query('SELECT count(*)::int AS n FROM operator_actions')).rows[0].n;

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 5);
  const passwordHash = await hashPassword('a long enough password for tests');
  await saveOperator(pool, { email: ANA, role: 'admin', passwordHash });
  await saveOperator(pool, { email: BIA, role: 'admin', passwordHash });
  await createBrand(pool, ana, { id: B, name: 'Bet B' });
}, 60_000);

afterAll(async () => {
  for (const s of stores) await s.close();
  for (const p of pools) await p.end();
  await pool?.end();
});

describe("a brand's rules", () => {
  it("are the operator's exactly while the brand sets none: a single-brand install changes nothing", async () => {
    const store = processStore();
    const operator = await store.current();
    expect(operator).toEqual({ version: 1, policy: defaultPolicy() });
    expect(await store.current(B)).toEqual(operator);
    expect(await store.current('default')).toEqual(operator);
    const shown = policyCli('show', '--brand', B);
    expect(shown.status, shown.err).toBe(0);
    expect(shown.out).toContain(`brand ${B}: the operator's version 1, with no rules of its own`);
    expect(shown.out).toContain('  deposits.routing.connectors = identity-payments\n');
  });

  it("set with the CLI apply to the brand alone, at once, audited, and reach every process's store", async () => {
    const [a, b] = [stores[0] as PolicyStore, processStore()];
    await b.current();
    const r = policyCli(
      'set',
      'deposits.routing.connectors=api-pix,identity-payments',
      'payouts.approvalAboveCentavos=100000',
      '--brand',
      B,
      '--reason',
      'B collects at its PSP first and approves more payouts',
      '--as',
      ANA,
    );
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain(
      `  deposits.routing.connectors: identity-payments (the operator's) → api-pix,identity-payments (${B}'s)`,
    );
    expect(r.out).toContain(`  payouts.approvalAboveCentavos: 1000000 (the operator's) → 100000 (${B}'s)`);
    expect(r.out).toContain(`applied: brand ${B}'s version 1 is in force`);
    expect(await latestBrandPolicyVersion(pool, B)).toMatchObject({
      version: 1,
      changedBy: ANA,
      approvedBy: null,
      overrides: {
        'deposits.routing.connectors': ['api-pix', 'identity-payments'],
        'payouts.approvalAboveCentavos': 100_000,
      },
    });
    // Notified: both stores have it well before their minute's look.
    for (const s of [a, b])
      await waitUntil(
        () => s.current(B),
        (p) => p.brandPolicyVersion === 1,
        5_000,
      );
    const atB = await b.current(B);
    expect(atB.version).toBe(1);
    expect(atB.policy.deposits.routing.connectors).toEqual(['api-pix', 'identity-payments']);
    expect(atB.policy.payouts.approvalAboveCentavos).toBe(100_000);
    // The default brand, and a process asking with no brand, keep the operator's.
    for (const s of [a, b]) {
      expect(await s.current('default')).toEqual({ version: 1, policy: defaultPolicy() });
      expect(await s.current()).toEqual({ version: 1, policy: defaultPolicy() });
    }
    const [audit] = await listActions(pool, { action: 'policy.change', order: 'newest', limit: 1 });
    expect(audit).toMatchObject({
      operatorEmail: ANA,
      outcome: 'done',
      caseType: 'brand-policy',
      caseId: `brand-policy-${B}-v1`,
      after: {
        brand: B,
        version: 1,
        changes: [
          { path: 'deposits.routing.connectors', new: 'api-pix,identity-payments', override: true },
          { path: 'payouts.approvalAboveCentavos', new: 100_000, override: true, loosens: false },
        ],
      },
    });
    const shown = policyCli('show', '--brand', B);
    expect(shown.out).toContain(`brand ${B}: the operator's version 1 with brand ${B}'s version 1`);
    expect(shown.out).toContain(`  deposits.routing.connectors = api-pix,identity-payments  (${B}'s)`);
    expect(shown.out).toContain('  withdrawals.dailyLimitCentavos = 5000000\n');
  });

  it("follow an operator's change wherever the brand sets nothing, keeping what it sets", async () => {
    const store = stores[0] as PolicyStore;
    const current = await latestPolicyVersion(pool);
    if (!current) throw new Error('no operator version');
    const out = await proposeAssignments(pool, ana, {
      current,
      assignments: [
        'withdrawals.dailyLimitCentavos=2000000',
        'payouts.approvalAboveCentavos=500000',
        'deposits.routing.connectors=identity-payments,api-pix',
      ],
      reason: 'tighter for everyone',
    });
    expect(out).toMatchObject({ kind: 'applied', version: 2 });
    const atB = await waitUntil(
      () => store.current(B),
      (p) => p.version === 2,
      5_000,
    );
    expect(atB.brandPolicyVersion).toBe(1);
    expect(atB.policy.withdrawals.dailyLimitCentavos).toBe(2_000_000);
    expect(atB.policy.payouts.approvalAboveCentavos).toBe(100_000);
    expect(atB.policy.deposits.routing.connectors).toEqual(['api-pix', 'identity-payments']);
    const atDefault = await store.current('default');
    expect(atDefault.policy.payouts.approvalAboveCentavos).toBe(500_000);
    expect(atDefault.policy.deposits.routing.connectors).toEqual(['identity-payments', 'api-pix']);
  });

  it("refuse a person's rule or the operator's alerts, naming the field, exit 2, nothing written", async () => {
    const before = { audit: await auditRows(), versions: await listBrandPolicyVersions(pool, B, 10) };
    for (const [assignment, field] of [
      ['withdrawals.dailyLimitCentavos=99999999', 'withdrawals.dailyLimitCentavos'],
      ['deposits.requireVerified=false', 'deposits.requireVerified'],
      ['withdrawals.stepUpAboveCentavos=0', 'withdrawals.stepUpAboveCentavos'],
      ['eligibility.failClosed=false', 'eligibility.failClosed'],
    ] as const) {
      const r = policyCli(
        'set',
        'payouts.approvers=1',
        assignment,
        '--brand',
        B,
        '--reason',
        'more',
        '--as',
        ANA,
      );
      expect(r.status).toBe(2);
      expect(r.err).toContain(`${field}: is the person's rule, the same at every brand`);
      expect(r.err).toContain('nothing changed');
    }
    const alerts = policyCli('set', 'alerts.structuring.count=9', '--brand', B, '--reason', 'x', '--as', ANA);
    expect(alerts.status).toBe(2);
    expect(alerts.err).toContain("alerts.structuring.count: is the operator's");
    const inherit = policyCli(
      'inherit',
      'withdrawals.kycMaxAgeMs',
      '--brand',
      B,
      '--reason',
      'x',
      '--as',
      ANA,
    );
    expect(inherit.status).toBe(2);
    expect(inherit.err).toContain("withdrawals.kycMaxAgeMs: is the person's rule");
    const ofDefault = policyCli(
      'set',
      'payouts.approvers=1',
      '--brand',
      'default',
      '--reason',
      'x',
      '--as',
      ANA,
    );
    expect(ofDefault.status).toBe(2);
    expect(ofDefault.err).toContain("--brand: the default brand's rules are the operator's policy");
    // The same refusal through the code every surface calls.
    await expect(
      proposeBrandPolicyChange(pool, ana, {
        brand: B,
        set: [['withdrawals.dailyLimitCentavos', '1']],
        inherit: [],
        reason: 'x',
      }),
    ).rejects.toBeInstanceOf(PolicyInputError);
    expect(await auditRows()).toBe(before.audit);
    expect(await listBrandPolicyVersions(pool, B, 10)).toEqual(before.versions);
    expect(await pendingBrandPolicyChanges(pool, B)).toEqual([]);
  });

  it('refuse a brand that does not exist (exit 1) and bad options (exit 2), nothing written', async () => {
    const before = await auditRows();
    const unknown = policyCli(
      'set',
      'payouts.approvers=1',
      '--brand',
      `nope-${tag}`,
      '--reason',
      'x',
      '--as',
      ANA,
    );
    expect(unknown.status).toBe(1);
    expect(unknown.err).toContain(`no brand nope-${tag}`);
    expect(policyCli('show', '--brand', `nope-${tag}`).status).toBe(1);
    const badBrand = policyCli('show', '--brand', 'Bet B');
    expect(badBrand.status).toBe(2);
    expect(badBrand.err).toContain('--brand:');
    const noReason = policyCli('set', 'payouts.approvers=1', '--brand', B, '--as', ANA);
    expect(noReason.status).toBe(2);
    expect(noReason.err).toContain('--reason: is required');
    expect(await auditRows()).toBe(before);
  });

  it("wait for a second admin when they loosen the brand's policy, a give-back to the operator's included", async () => {
    const store = stores[0] as PolicyStore;
    // B's approval threshold back to the operator's (500000): higher, so a loosening.
    const r = policyCli(
      'inherit',
      'payouts.approvalAboveCentavos',
      '--brand',
      B,
      '--reason',
      "B follows the operator's four eyes again",
      '--as',
      ANA,
    );
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain(
      `  payouts.approvalAboveCentavos: 100000 (${B}'s) → 500000 (the operator's)  (loosens: needs a second admin)`,
    );
    const [pending] = await pendingBrandPolicyChanges(pool, B);
    if (!pending) throw new Error('no pending change');
    expect(r.out).toContain(`waits for a second admin: change ${pending.id}`);
    expect((await store.current(B)).policy.payouts.approvalAboveCentavos).toBe(100_000);
    const shown = policyCli('show', '--brand', B);
    expect(shown.out).toContain(`1 change(s) of brand ${B} waiting for a second admin:`);
    const self = policyCli('approve', String(pending.id), '--brand', B, '--as', ANA);
    expect(self.status).toBe(1);
    expect(self.err).toContain('may not approve it');
    const other = policyCli('approve', String(pending.id), '--brand', B, '--as', BIA);
    expect(other.status, other.err).toBe(0);
    expect(other.out).toContain(`approved: brand ${B}'s version 2 is in force`);
    expect(await latestBrandPolicyVersion(pool, B)).toMatchObject({
      version: 2,
      changedBy: ANA,
      approvedBy: BIA,
      overrides: { 'deposits.routing.connectors': ['api-pix', 'identity-payments'] },
    });
    const atB = await waitUntil(
      () => store.current(B),
      (p) => p.brandPolicyVersion === 2,
      5_000,
    );
    expect(atB.policy.payouts.approvalAboveCentavos).toBe(500_000);
    const [approved] = await listActions(pool, { action: 'policy.approve', order: 'newest', limit: 1 });
    expect(approved).toMatchObject({
      operatorEmail: BIA,
      outcome: 'done',
      caseType: 'brand-policy',
      after: { brand: B, version: 2, changes: [{ path: 'payouts.approvalAboveCentavos', loosens: true }] },
    });
  });

  it('show what a version changed, and a rejected change never applies', async () => {
    const diff = policyCli('diff', '--brand', B);
    expect(diff.status, diff.err).toBe(0);
    expect(diff.out).toContain(`brand ${B}'s version 1 → 2, over the operator's version 2:`);
    expect(diff.out).toContain(
      `  payouts.approvalAboveCentavos: 100000 (${B}'s) → 500000 (the operator's)  (loosens: needs a second admin)`,
    );
    const first = policyCli('diff', '0', '1', '--brand', B);
    expect(first.out).toContain(
      `  deposits.routing.connectors: identity-payments,api-pix (the operator's) → api-pix,identity-payments (${B}'s)`,
    );
    expect(policyCli('diff', '1', '7', '--brand', B).status).toBe(1);
    const proposed = policyCli(
      'set',
      'payouts.approvers=1',
      '--brand',
      B,
      '--reason',
      'one is enough',
      '--as',
      ANA,
    );
    expect(proposed.status, proposed.err).toBe(0);
    const [pending] = await pendingBrandPolicyChanges(pool, B);
    if (!pending) throw new Error('no pending change');
    const rejected = policyCli('reject', String(pending.id), '--brand', B, '--as', BIA, '--reason', 'no');
    expect(rejected.status, rejected.err).toBe(0);
    expect(rejected.out).toContain(`rejected: change ${pending.id} will not apply`);
    expect(await pendingBrandPolicyChanges(pool, B)).toEqual([]);
    expect((await latestBrandPolicyVersion(pool, B))?.version).toBe(2);
    expect((await (stores[0] as PolicyStore).current(B)).policy.payouts.approvers).toBe(2);
    const again = policyCli('approve', String(pending.id), '--brand', B, '--as', BIA);
    expect(again.status).toBe(1);
    expect(again.err).toContain('is rejected already');
    const [audit] = await listActions(pool, { action: 'policy.reject', order: 'newest', limit: 1 });
    expect(audit).toMatchObject({
      operatorEmail: BIA,
      outcome: 'done',
      caseType: 'brand-policy',
      reason: 'no',
    });
  });

  it('refuse a proposal made over a version no longer in force, inside its own transaction, nothing written', async () => {
    const brandAt = (await latestBrandPolicyVersion(pool, B))?.version ?? 0;
    const operatorAt = (await latestPolicyVersion(pool))?.version ?? 0;
    expect(brandAt).toBeGreaterThan(0);
    const before = { audit: await auditRows(), versions: await listBrandPolicyVersions(pool, B, 10) };
    const propose = (
      set: [string, string],
      base: { baseVersion: number; baseOperatorVersion: number },
      reason: string,
    ) => proposeBrandPolicyChange(pool, ana, { brand: B, set: [set], inherit: [], reason, ...base });
    // A tightening over the brand's previous version, a loosening over the operator's previous one.
    const refused = [
      propose(
        ['payouts.approvalAboveCentavos', '400000'],
        { baseVersion: brandAt - 1, baseOperatorVersion: operatorAt },
        'x',
      ),
      propose(['payouts.approvers', '1'], { baseVersion: brandAt, baseOperatorVersion: operatorAt - 1 }, 'x'),
    ];
    for (const r of refused) {
      const err = await r.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(PolicyChangeRefused);
      expect((err as PolicyChangeRefused).kind).toBe('stale');
    }
    expect(await auditRows()).toBe(before.audit);
    expect(await listBrandPolicyVersions(pool, B, 10)).toEqual(before.versions);
    expect(await pendingBrandPolicyChanges(pool, B)).toEqual([]);

    // Two admins' changes from the same page at once: one applies, the other is refused as stale.
    const base = { baseVersion: brandAt, baseOperatorVersion: operatorAt };
    const raced = await Promise.allSettled([
      propose(['payouts.approvalAboveCentavos', '400000'], base, 'first'),
      propose(['payouts.approvalAboveCentavos', '300000'], base, 'second'),
    ]);
    const won = raced.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    const lost = raced.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    expect(won).toHaveLength(1);
    expect(won[0]).toMatchObject({ kind: 'applied', version: brandAt + 1 });
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(PolicyChangeRefused);
    expect((lost[0] as PolicyChangeRefused).kind).toBe('stale');
    const winner = raced[0]?.status === 'fulfilled' ? 400_000 : 300_000;
    expect(await latestBrandPolicyVersion(pool, B)).toMatchObject({
      version: brandAt + 1,
      overrides: { 'payouts.approvalAboveCentavos': winner },
    });
    expect(await auditRows()).toBe(before.audit + 1);
    expect(await pendingBrandPolicyChanges(pool, B)).toEqual([]);
  });
});
