import { afterAll, describe, expect, inject, it } from 'vitest';
import { migrate } from '../../db/migrate';
import { testPool } from '../helpers/postgres';

describe('Postgres (embedded, migrated by the global setup)', () => {
  const pool = testPool();
  afterAll(() => pool.end());

  it('has every migration applied, in order, and a second run applies nothing', async () => {
    const { rows } = await pool.query<{ name: string }>('SELECT name FROM pgmigrations ORDER BY run_on, id');
    const names = rows.map((r) => r.name);
    expect(names).toEqual([...names].sort());
    expect(names).toContain('1732000000001_flows');
    expect(names).toContain('1732000000004_webhook_inbox');
    expect(await migrate(inject('databaseUrl'))).toEqual([]);
  });

  it('writes and reads a row', async () => {
    const id = `deposit-test-${Date.now()}`;
    await pool.query(
      `INSERT INTO flows (workflow_id, type, business_id, status, amount_centavos) VALUES ($1, 'deposit', $2, 'awaiting_payment', 15000)`,
      [id, id.slice(8)],
    );
    const { rows } = await pool.query(
      'SELECT type, status, amount_centavos FROM flows WHERE workflow_id = $1',
      [id],
    );
    expect(rows).toEqual([{ type: 'deposit', status: 'awaiting_payment', amount_centavos: 15000 }]);
  });
});
