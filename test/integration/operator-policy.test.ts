import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashPassword } from '../../common/passwords';
import { migrate } from '../../db/migrate';
import { listActions } from '../../db/operator-actions';
import { saveOperator } from '../../db/operators';
import { latestPolicyVersion, pendingPolicyChanges, seedPolicyVersion } from '../../db/policy';
import { createPool, type Pool } from '../../db/pool';
import { defaultPolicy } from '../../policy/seed';
import { freshDatabase } from '../helpers/postgres';

// `npm run operator -- policy ...`: showing, diffing and changing the rules policy as an admin
// runs it, against a database of its own; four eyes on a loosening.

const ROOT = path.resolve(__dirname, '../..');
let databaseUrl: string;
let pool: Pool;

function policyCli(...args: string[]) {
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(ROOT, 'scripts/operator.ts'), 'policy', ...args],
    { cwd: ROOT, env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: 'utf8' },
  );
  return { status: r.status, out: r.stdout, err: r.stderr };
}

const ANA = 'ana.admin@pixflow.local';
const BIA = 'bia.admin@pixflow.local';
const CAIO = 'caio.reviewer@pixflow.local';

beforeAll(async () => {
  databaseUrl = await freshDatabase();
  await migrate(databaseUrl);
  pool = createPool(databaseUrl, 2);
  const passwordHash = await hashPassword('a long enough password for tests');
  await saveOperator(pool, { email: ANA, role: 'admin', passwordHash });
  await saveOperator(pool, { email: BIA, role: 'admin', passwordHash });
  await saveOperator(pool, { email: CAIO, role: 'reviewer', passwordHash });
}, 60_000);

afterAll(async () => {
  await pool?.end();
});

describe('npm run operator -- policy', () => {
  it('says there is no policy until a process seeded one, then shows every field of version 1', async () => {
    const none = policyCli('show');
    expect(none.status).toBe(1);
    expect(none.err).toContain('no policy version yet');
    await seedPolicyVersion(pool, defaultPolicy(), 'seeded from the environment');
    const shown = policyCli('show');
    expect(shown.status, shown.err).toBe(0);
    expect(shown.out).toContain('version 1');
    expect(shown.out).toContain('  withdrawals.dailyLimitCentavos = 5000000');
    expect(shown.out).toContain('  payouts.authorizationOnNoAnswer = deny');
  });

  it('a tightening applies at once: the diff, the new version, the audit trail', async () => {
    const r = policyCli(
      'set',
      'withdrawals.dailyLimitCentavos=100000',
      '--reason',
      'fraud wave',
      '--as',
      ANA,
    );
    expect(r.status, r.err).toBe(0);
    expect(r.out).toContain('withdrawals.dailyLimitCentavos: 5000000 → 100000');
    expect(r.out).toContain('applied: version 2 is in force');
    expect(await latestPolicyVersion(pool)).toMatchObject({
      version: 2,
      changedBy: ANA,
      reason: 'fraud wave',
    });
    const [audit] = await listActions(pool, { action: 'policy.change', order: 'newest', limit: 1 });
    expect(audit).toMatchObject({ operatorEmail: ANA, operatorRole: 'admin', outcome: 'done' });
  });

  it('bad input names the field and changes nothing', async () => {
    const cases: Array<[string[], string]> = [
      [['set', 'payouts.approvers=1', '--as', ANA], '--reason: is required'],
      [
        ['set', 'payouts.approverz=1', '--reason', 'typo', '--as', ANA],
        'payouts.approverz: is not a field of the policy',
      ],
      [['set', 'payouts.approvers=3', '--reason', 'three', '--as', ANA], 'payouts.approvers: must be 1 or 2'],
      [
        ['set', 'payouts.deadlineMs=soon', '--reason', 'x', '--as', ANA],
        'payouts.deadlineMs: must be milliseconds',
      ],
      [
        ['set', 'payouts.approvers=1', '--reason', 'x', '--as', CAIO],
        `--as: ${CAIO} is not an enabled admin operator`,
      ],
      [
        ['set', 'payouts.approvers=1', '--reason', 'x'],
        '--as: must be the email address of an admin operator',
      ],
      [['approve', 'twelve', '--as', BIA], 'id: must be a change id'],
    ];
    for (const [args, said] of cases) {
      const r = policyCli(...args);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.err, args.join(' ')).toContain(said);
    }
    expect((await latestPolicyVersion(pool))?.version).toBe(2);
    expect(await pendingPolicyChanges(pool)).toEqual([]);
  });

  it('a loosening waits for a second, different admin; its proposer cannot approve it', async () => {
    const proposed = policyCli(
      'set',
      'payouts.approvers=1',
      '--reason',
      'one approver in December',
      '--as',
      ANA,
    );
    expect(proposed.status, proposed.err).toBe(0);
    expect(proposed.out).toContain('payouts.approvers: 2 → 1  (loosens: needs a second admin)');
    const id = /waits for a second admin: change (\d+)/.exec(proposed.out)?.[1];
    expect(id).toBeDefined();
    expect((await latestPolicyVersion(pool))?.version).toBe(2);
    expect(policyCli('show').out).toContain(`change ${id}, proposed by ${ANA}`);

    const self = policyCli('approve', String(id), '--as', ANA);
    expect(self.status).toBe(1);
    expect(self.err).toContain('a second, different admin must');
    expect((await latestPolicyVersion(pool))?.version).toBe(2);

    const approved = policyCli('approve', String(id), '--as', BIA);
    expect(approved.status, approved.err).toBe(0);
    expect(approved.out).toContain('approved: version 3 is in force');
    expect(await latestPolicyVersion(pool)).toMatchObject({ version: 3, changedBy: ANA, approvedBy: BIA });

    const diff = policyCli('diff');
    expect(diff.status, diff.err).toBe(0);
    expect(diff.out).toContain('version 2 → 3:');
    expect(diff.out).toContain('payouts.approvers: 2 → 1');
    expect(policyCli('diff', '1', '3').out).toContain('withdrawals.dailyLimitCentavos: 5000000 → 100000');
  });

  it('a rejected change never applies', async () => {
    const proposed = policyCli(
      'set',
      'deposits.holdThirdParty=false',
      '--reason',
      'credit them all',
      '--as',
      BIA,
    );
    const id = /change (\d+)/.exec(proposed.out)?.[1];
    const rejected = policyCli('reject', String(id), '--as', ANA, '--reason', 'not without compliance');
    expect(rejected.status, rejected.err).toBe(0);
    expect(policyCli('approve', String(id), '--as', ANA).err).toContain('is rejected already');
    expect((await latestPolicyVersion(pool))?.version).toBe(3);
  });
});
