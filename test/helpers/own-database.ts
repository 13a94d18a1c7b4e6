import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/**
 * A fresh, empty database on the run's server, owned by a role of its own with a fresh password:
 * for processes under NODE_ENV=production, which refuse the run's public one (`pixflow`).
 */
export async function databaseOfItsOwn(): Promise<string> {
  const url = new URL(inject('databaseUrl'));
  const name = `pixflow_o_${randomBytes(5).toString('hex')}`;
  const password = randomBytes(32).toString('hex');
  const admin = new pg.Client({ connectionString: url.toString() });
  await admin.connect();
  try {
    await admin.query(`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`);
    await admin.query(`CREATE DATABASE ${name} OWNER ${name}`);
  } finally {
    await admin.end();
  }
  url.username = name;
  url.password = password;
  url.pathname = `/${name}`;
  return url.toString();
}
