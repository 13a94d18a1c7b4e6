import { runner } from 'node-pg-migrate';
import { afterAll, describe, expect, it } from 'vitest';
import {
  getCustomer,
  recordVerification,
  suspendVerification,
  type VerificationWrite,
} from '../../db/customers';
import { MIGRATIONS_DIR, migrate } from '../../db/migrate';
import { createPool } from '../../db/pool';
import { freshDatabase, testPool } from '../helpers/postgres';

// The customer's verification is written by every onboarding status change, each possibly
// retried or late: only a newer write may move it.

const pool = testPool();
afterAll(() => pool.end());

let n = 0;
const person = () => `hash-${Date.now()}-${++n}`;

const write = (cpfHash: string, over: Partial<VerificationWrite>): VerificationWrite => ({
  cpfHash,
  cpfMasked: '***.456.789-**',
  verification: 'pending',
  at: new Date(),
  flow: `onboarding-${cpfHash}`,
  run: 'run-a',
  seq: 1,
  ...over,
});

const verificationOf = async (cpfHash: string) => (await getCustomer(pool, cpfHash))?.verification;

describe('customer verification', () => {
  it('a late or retried write of a run never moves it back', async () => {
    const p = person();
    expect(await recordVerification(pool, write(p, { seq: 1 }))).toBe(true);
    expect(await recordVerification(pool, write(p, { seq: 4, verification: 'approved' }))).toBe(true);
    expect(await recordVerification(pool, write(p, { seq: 2 }))).toBe(false);
    expect(await recordVerification(pool, write(p, { seq: 4, verification: 'approved' }))).toBe(false);
    expect(await verificationOf(p)).toBe('approved');
  });

  it('a new onboarding follows an expired one; the older one never overrides it', async () => {
    const p = person();
    await recordVerification(pool, write(p, { seq: 1 }));
    await recordVerification(pool, write(p, { seq: 5, verification: 'expired' }));
    // A new run of the onboarding starts over at seq 1.
    expect(await recordVerification(pool, write(p, { run: 'run-b', seq: 1 }))).toBe(true);
    // A late write of the expired run, of any seq, is older.
    expect(await recordVerification(pool, write(p, { run: 'run-a', seq: 3 }))).toBe(false);
    expect(await recordVerification(pool, write(p, { run: 'run-b', seq: 3, verification: 'rejected' }))).toBe(
      true,
    );
    expect(await recordVerification(pool, write(p, { run: 'run-a', seq: 9, verification: 'expired' }))).toBe(
      false,
    );
    expect(await verificationOf(p)).toBe('rejected');
  });

  it('keeps the time it entered a status while the status stays', async () => {
    const p = person();
    const first = new Date(Date.now() - 60_000);
    await recordVerification(pool, write(p, { seq: 1, at: first }));
    await recordVerification(pool, write(p, { seq: 2 }));
    expect((await getCustomer(pool, p))?.verificationAt).toBe(first.toISOString());
  });

  it('a suspended verification waits for an operator: no onboarding write moves it', async () => {
    const p = person();
    await recordVerification(pool, write(p, { seq: 3, verification: 'approved' }));
    const suspend = {
      cpfHash: p,
      expected: 'approved',
      reason: 'provider_contradicts: manual_refused',
      evidence: { statusVerification: 'manual_refused' },
      at: new Date(),
    };
    expect(await suspendVerification(pool, suspend)).toBe(true);
    // Repeated (a copy of the notification): nothing more to do.
    expect(await suspendVerification(pool, suspend)).toBe(false);
    expect(await recordVerification(pool, write(p, { seq: 9, verification: 'approved' }))).toBe(false);
    expect(await recordVerification(pool, write(p, { run: 'run-z', seq: 1 }))).toBe(false);
    expect(await getCustomer(pool, p)).toMatchObject({
      verification: 'suspended',
      suspension: {
        reason: 'provider_contradicts: manual_refused',
        evidence: { statusVerification: 'manual_refused' },
      },
    });
  });
});

describe('the customers migration', () => {
  it('carries over the people pixflow already knows: latest onboarding and latest KYC facts', async () => {
    const url = await freshDatabase();
    await runner({
      databaseUrl: url,
      dir: MIGRATIONS_DIR,
      direction: 'up',
      migrationsTable: 'pgmigrations',
      count: 6,
      log: () => {},
      logger: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
    });
    const db = createPool(url, 2);
    try {
      await db.query(
        `INSERT INTO flows (workflow_id, type, business_id, status, cpf_hash, cpf_masked, seq, created_at, updated_at)
         VALUES ('onboarding-h1', 'onboarding', 'h1', 'approved', 'h1', '***.111.111-**', 4, now() - interval '1 hour', now()),
                ('onboarding-h2', 'onboarding', 'h2', 'awaiting_review', 'h2', '***.222.222-**', 3, now(), now()),
                ('withdrawal-x', 'withdrawal', 'x', 'completed', 'h3', '***.333.333-**', 2, now(), now())`,
      );
      await db.query(
        `INSERT INTO kyc_records (workflow_id, plan, cpf_hash, record, received_at)
         VALUES ('onboarding-h1', 'plan_basic', 'h1', $1, now() - interval '2 days'),
                ('onboarding-h1', 'plan_full', 'h1', $2, now() - interval '1 hour')`,
        [
          JSON.stringify({ status: 'suspenso', is_under_18: false, date_death: null, is_pep: false }),
          JSON.stringify({ status: 'regular', is_under_18: false, date_death: null, is_pep: true }),
        ],
      );
      await migrate(url);
      const one = await getCustomer(db, 'h1');
      expect(one).toMatchObject({
        verification: 'approved',
        verificationFlow: 'onboarding-h1',
        kyc: { status: 'regular', pep: true, under18: false, deceased: false, restricted: false },
      });
      expect((await getCustomer(db, 'h2'))?.verification).toBe('pending');
      // Only onboardings make a person here; a payout alone does not.
      expect(await getCustomer(db, 'h3')).toBeUndefined();
      // The carried-over row knows no run: the same onboarding's next write applies by seq.
      expect(
        await recordVerification(db, {
          ...write('h2', { seq: 4, verification: 'approved', run: 'run-live' }),
          flow: 'onboarding-h2',
        }),
      ).toBe(true);
    } finally {
      await db.end();
    }
  });
});
