import { loadConfigOrExit } from '../common/config';
import { createLogger } from '../common/logger';
import { SECRETS_READ_BY } from '../common/production-secrets';
import { migrate } from '../db/migrate';

// Applies pixflow's pending migrations to DATABASE_URL, then exits: docker-compose.yml's
// `migrate` service (`node dist/scripts/migrate.js`), which the API and the workers wait for.
// `npm start` migrates its own database itself. Safe to run from several places at once (it locks).

async function main() {
  const config = loadConfigOrExit(process.env, { secrets: SECRETS_READ_BY.migrate });
  if (!config.DATABASE_URL) {
    process.stderr.write('pixflow migrate: DATABASE_URL is not set\n');
    process.exit(1);
  }
  const log = createLogger('migrate', config.LOG_LEVEL);
  const applied = await migrate(config.DATABASE_URL);
  log.info({ applied }, applied.length ? 'migrations applied' : 'database already up to date');
}

main().catch((err) => {
  process.stderr.write(`migrate failed: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
