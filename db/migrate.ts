import path from 'node:path';
import { runner } from 'node-pg-migrate';

export const MIGRATIONS_DIR = path.join(__dirname, 'migrations');

/** Applies every pending migration in order; safe to call from several processes at once (it locks). */
export async function migrate(databaseUrl: string, log: (msg: string) => void = () => {}): Promise<string[]> {
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Number.POSITIVE_INFINITY,
    checkOrder: true,
    log,
    logger: { info: log, warn: log, error: log, debug: () => {} },
    verbose: false,
  });
  return applied.map((m) => m.name);
}
