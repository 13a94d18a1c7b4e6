import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logger';
import { migrate } from '../../db/migrate';
import { listActions } from '../../db/operator-actions';
import {
  getPolicyChange,
  latestPolicyVersion,
  listPolicyVersions,
  pendingPolicyChanges,
} from '../../db/policy';
import { createPool, type Pool } from '../../db/pool';
import {
  approvePolicyChange,
  type PolicyActor,
  PolicyChangeRefused,
  proposePolicyChange,
  rejectPolicyChange,
} from '../../policy/changes';
import { applyAssignments, PolicyInputError } from '../../policy/diff';
import { type Policy, policySchema } from '../../policy/schema';
import { type PolicyStore, startPolicyStore } from '../../policy/store';
import { defaultPolicy } from '../helpers/policy';
import { freshDatabase } from '../helpers/postgres';
import { waitUntil } from '../helpers/wait';

// The policy in Postgres: version 1 seeded once whoever starts first, versions only added, a
// loosening waiting for a second admin, and every process's store following a change.

const log = createLogger('policy-test', 'silent');
/** Until `cond` holds, 5 s at most. */
const waitFor = (cond: () => Promise<boolean>, o: { timeoutMs: number }) =>
  waitUntil(cond, Boolean, o.timeoutMs);
const admin = (email: string): PolicyActor => ({
  operatorId: null,
  operatorEmail: email,
  operatorRole: 'admin',
});
const ana = admin('ana@pixflow.local');
const bia = admin('bia@pixflow.local');

let databaseUrl: string;
let pool: Pool;
const stores: PolicyStore[] = [];
/** The stores' own pools, ended after them. */
const pools: Pool[] = [];

/** A process's store on its own pool, as the API and the worker each have. */
async function processStore(seed: Policy): Promise<PolicyStore> {
  const own = createPool(databaseUrl, 2);
  const store = startPolicyStore({ pool: own, seed, log, refreshMs: 60_000 });
  stores.push(store);
  pools.push(own);
  return store;
}

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 5);
});

afterAll(async () => {
  for (const s of stores) await s.close();
  for (const p of pools) await p.end();
  await pool?.end();
});

const set = (policy: Policy, path: string, value: string) => applyAssignments(policy, [[path, value]]);

describe('the rules policy in Postgres', () => {
  it('two processes starting at once on an empty table make one version 1, and both read it', async () => {
    const seed = defaultPolicy();
    const other = set(seed, 'withdrawals.dailyLimitCentavos', '123');
    const [a, b] = await Promise.all([processStore(seed), processStore(other)]);
    const [ra, rb] = await Promise.all([a.current(), b.current()]);
    const versions = await listPolicyVersions(pool, 10);
    expect(versions).toHaveLength(1);
    expect(versions[0]).toMatchObject({ version: 1, changedBy: 'environment', approvedBy: null });
    expect(ra.version).toBe(1);
    expect(ra).toEqual(rb);
    expect([seed, other]).toContainEqual(ra.policy);
    // Whichever seed was written, a third process's environment changes nothing.
    const third = await processStore(set(seed, 'withdrawals.dailyLimitCentavos', '999'));
    expect(await third.current()).toEqual(ra);
    expect(await listPolicyVersions(pool, 10)).toHaveLength(1);
  });

  it('a tightening applies at once as the next version, audited with its diff, and reaches every store', async () => {
    const [a, b] = [stores[0] as PolicyStore, stores[1] as PolicyStore];
    const before = await a.current();
    const lower = Math.max(1, Math.floor(before.policy.withdrawals.dailyLimitCentavos / 2));
    const out = await proposePolicyChange(pool, ana, {
      policy: set(before.policy, 'withdrawals.dailyLimitCentavos', String(lower)),
      reason: 'lower daily limit while we review fraud',
      baseVersion: before.version,
    });
    expect(out).toMatchObject({ kind: 'applied', version: before.version + 1 });
    expect(out.changes).toEqual([
      {
        path: 'withdrawals.dailyLimitCentavos',
        old: before.policy.withdrawals.dailyLimitCentavos,
        new: lower,
        loosens: false,
      },
    ]);
    expect(await latestPolicyVersion(pool)).toMatchObject({
      version: before.version + 1,
      changedBy: ana.operatorEmail,
      approvedBy: null,
      reason: 'lower daily limit while we review fraud',
    });
    // Notified: each store has it well before its periodic look (a minute here).
    for (const s of [a, b])
      await waitFor(async () => (await s.current()).version === before.version + 1, { timeoutMs: 5_000 });
    expect((await b.current()).policy.withdrawals.dailyLimitCentavos).toBe(lower);
    const [audit] = await listActions(pool, { action: 'policy.change', order: 'newest', limit: 1 });
    expect(audit).toMatchObject({
      operatorEmail: ana.operatorEmail,
      outcome: 'done',
      caseId: `policy-v${before.version + 1}`,
      reason: 'lower daily limit while we review fraud',
      after: {
        version: before.version + 1,
        changes: [{ path: 'withdrawals.dailyLimitCentavos', new: lower }],
      },
    });
  });

  it('a loosening waits for a second, different admin: its proposer may not approve it', async () => {
    const before = await latestPolicyVersion(pool);
    const current = (await (stores[0] as PolicyStore).current()).policy;
    const out = await proposePolicyChange(pool, ana, {
      policy: set(set(current, 'payouts.approvers', '1'), 'alerts.structuring.count', '4'),
      reason: 'one approver is enough for the holidays',
    });
    if (out.kind !== 'pending') throw new Error(`expected pending, got ${out.kind}`);
    expect(out.changes.map((c) => [c.path, c.loosens])).toEqual([
      ['payouts.approvers', true],
      ['alerts.structuring.count', false],
    ]);
    // Nothing applied yet, not even the part that tightens.
    expect((await latestPolicyVersion(pool))?.version).toBe(before?.version);
    expect((await pendingPolicyChanges(pool)).map((c) => c.id)).toEqual([out.changeId]);

    await expect(approvePolicyChange(pool, admin('ANA@pixflow.local'), out.changeId)).rejects.toMatchObject({
      kind: 'same_admin',
    });
    const [refused] = await listActions(pool, { action: 'policy.approve', order: 'newest', limit: 1 });
    expect(refused).toMatchObject({ outcome: 'refused', caseId: `policy-change-${out.changeId}` });
    expect((await latestPolicyVersion(pool))?.version).toBe(before?.version);

    const approved = await approvePolicyChange(pool, bia, out.changeId);
    expect(approved.version).toBe((before?.version ?? 0) + 1);
    expect(await latestPolicyVersion(pool)).toMatchObject({
      version: approved.version,
      changedBy: ana.operatorEmail,
      approvedBy: bia.operatorEmail,
      reason: 'one approver is enough for the holidays',
    });
    expect(await getPolicyChange(pool, out.changeId)).toMatchObject({
      status: 'applied',
      decidedBy: bia.operatorEmail,
      version: approved.version,
    });
    expect(await pendingPolicyChanges(pool)).toEqual([]);
    // Decided once: a second approval is a conflict.
    await expect(approvePolicyChange(pool, admin('caio@pixflow.local'), out.changeId)).rejects.toMatchObject({
      kind: 'not_pending',
    });
    await waitFor(async () => (await (stores[1] as PolicyStore).current()).version === approved.version, {
      timeoutMs: 5_000,
    });
    expect((await (stores[1] as PolicyStore).current()).policy.payouts.approvers).toBe(1);
  });

  it('a pending change proposed over an older version is not approved; a rejected one changes nothing', async () => {
    const current = (await (stores[0] as PolicyStore).current()).policy;
    const loosen = await proposePolicyChange(pool, ana, {
      policy: set(current, 'deposits.holdThirdParty', 'false'),
      reason: 'credit third-party payments',
    });
    if (loosen.kind !== 'pending') throw new Error('expected pending');
    // Meanwhile a tightening becomes the next version.
    await proposePolicyChange(pool, bia, {
      policy: set(current, 'payouts.approvers', '2'),
      reason: 'two approvers again',
    });
    await expect(approvePolicyChange(pool, bia, loosen.changeId)).rejects.toMatchObject({ kind: 'stale' });
    const version = (await latestPolicyVersion(pool))?.version;
    await rejectPolicyChange(pool, bia, loosen.changeId, 'proposed over an older version');
    expect(await getPolicyChange(pool, loosen.changeId)).toMatchObject({
      status: 'rejected',
      decidedBy: bia.operatorEmail,
    });
    expect((await latestPolicyVersion(pool))?.version).toBe(version);
    const [rejected] = await listActions(pool, { action: 'policy.reject', order: 'newest', limit: 1 });
    expect(rejected).toMatchObject({ outcome: 'done', reason: 'proposed over an older version' });
  });

  it('bad input names its field and changes nothing: no reason, no change, a stale base, a wrong value', async () => {
    // The version in force as the table has it: a store may not have heard of the last one yet.
    const inForce = await latestPolicyVersion(pool);
    if (!inForce) throw new Error('no policy version');
    const current = policySchema.parse(inForce.policy);
    const err = async (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => e,
      );
    const noReason = await err(
      proposePolicyChange(pool, ana, { policy: set(current, 'payouts.approvers', '1'), reason: '  ' }),
    );
    expect(noReason).toBeInstanceOf(PolicyInputError);
    expect((noReason as PolicyInputError).field).toBe('reason');
    const same = await err(proposePolicyChange(pool, ana, { policy: current, reason: 'nothing' }));
    expect((same as PolicyInputError).field).toBe('policy');
    const wrong = await err(
      proposePolicyChange(pool, ana, {
        policy: { ...current, payouts: { ...current.payouts, atRiskShare: 2 } },
        reason: 'typo',
      }),
    );
    expect((wrong as PolicyInputError).field).toBe('payouts.atRiskShare');
    const stale = await err(
      proposePolicyChange(pool, ana, {
        policy: set(current, 'payouts.deadlineMs', '60m'),
        reason: 'shorter deadline',
        baseVersion: 1,
      }),
    );
    expect(stale).toBeInstanceOf(PolicyChangeRefused);
    expect((stale as PolicyChangeRefused).kind).toBe('stale');
    expect((await latestPolicyVersion(pool))?.version).toBe(inForce?.version);
    expect(await pendingPolicyChanges(pool)).toEqual([]);
  });

  it('a version is never changed or removed', async () => {
    await expect(pool.query(`UPDATE rules_policy SET reason = 'x' WHERE version = 1`)).rejects.toThrow(
      /append-only/,
    );
    await expect(pool.query('DELETE FROM rules_policy')).rejects.toThrow(/append-only/);
  });

  it('a store whose listening connection is lost still finds a new version (read again on reconnect, and looked for every refreshMs)', async () => {
    const own = createPool(databaseUrl, 2);
    const store = startPolicyStore({ pool: own, seed: defaultPolicy(), log, refreshMs: 300 });
    stores.push(store);
    pools.push(own);
    await waitFor(async () => store.listening(), { timeoutMs: 5_000 });
    // Its listening connection is ended from the server's side, as a Postgres restart would.
    await pool.query(
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
        WHERE datname = current_database() AND query LIKE 'LISTEN pixflow_policy%' AND pid <> pg_backend_pid()`,
    );
    const current = await store.current();
    await proposePolicyChange(pool, ana, {
      policy: set(current.policy, 'payouts.deadlineMs', '90m'),
      reason: 'a shorter prize deadline',
    });
    await waitFor(async () => (await store.current()).version === current.version + 1, { timeoutMs: 5_000 });
    expect((await store.current()).policy.payouts.deadlineMs).toBe(90 * 60_000);
  });

  it('a process whose rule variables differ from the version in force says so once, naming the fields, and applies the version', async () => {
    const lines: string[] = [];
    const captured = pino({ level: 'info' }, { write: (line: string) => lines.push(line) });
    const inForce = await latestPolicyVersion(pool);
    const own = createPool(databaseUrl, 2);
    pools.push(own);
    const seed = set(defaultPolicy(), 'alerts.newAccount.minCentavos', '7');
    const store = startPolicyStore({ pool: own, seed, log: captured, refreshMs: 60_000 });
    stores.push(store);
    expect((await store.current()).version).toBe(inForce?.version);
    expect((await store.current()).policy.alerts.newAccount.minCentavos).not.toBe(7);
    const warned = lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40);
    expect(warned).toHaveLength(1);
    expect(warned[0].fields).toContain('alerts.newAccount.minCentavos');
    await store.refresh();
    expect(lines.map((l) => JSON.parse(l)).filter((l) => l.level === 40)).toHaveLength(1);
  });

  it('two changes at once over the same version: one applies, the other is refused as stale; without a base, each is the next version', async () => {
    const inForce = await latestPolicyVersion(pool);
    const base = (await (stores[0] as PolicyStore).refresh()).policy;
    const over = (value: string, baseVersion?: number) =>
      proposePolicyChange(pool, ana, {
        policy: set(base, 'payouts.deadlineMs', value),
        reason: `deadline ${value}`,
        ...(baseVersion === undefined ? {} : { baseVersion }),
      }).then(
        (r) => r,
        (err: unknown) => err,
      );
    const both = await Promise.all([over('61m', inForce?.version), over('62m', inForce?.version)]);
    expect(both.filter((r) => (r as { kind?: string }).kind === 'applied')).toHaveLength(1);
    expect(both.filter((r) => r instanceof PolicyChangeRefused && r.kind === 'stale')).toHaveLength(1);
    const next = (await latestPolicyVersion(pool))?.version ?? 0;
    const unbased = await Promise.all([over('63m'), over('64m')]);
    expect(unbased.map((r) => (r as { version?: number }).version).sort()).toEqual([next + 1, next + 2]);
  });
});
