import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { createPool } from '../../db/pool';

/** A pool on this test run's database (made and migrated by test/global-setup.ts). */
export function testPool() {
  return createPool(inject('databaseUrl'), 5);
}

/** A fresh, empty database on the same server, for tests that must not see others' rows. */
export async function freshDatabase(): Promise<string> {
  const base = new URL(inject('databaseUrl'));
  const name = `pixflow_t_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base.toString() });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  base.pathname = `/${name}`;
  return base.toString();
}
