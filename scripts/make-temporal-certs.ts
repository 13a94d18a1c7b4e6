import path from 'node:path';
import { ensureTemporalCerts } from './temporal-certs';

// `npx tsx scripts/make-temporal-certs.ts ./temporal-tls`: the private CA, the Temporal server's
// and the clients' certificates docker-compose.yml mounts (docs/production.md, "Temporal over
// mutual TLS"). Run again, it keeps what is there and makes only what is missing or near its end.

const dir = process.argv[2];
if (!dir || process.argv.length > 3) {
  process.stderr.write('usage: npx tsx scripts/make-temporal-certs.ts <folder>\n');
  process.exit(2);
}
try {
  const files = ensureTemporalCerts(path.resolve(dir));
  process.stdout.write(
    `${files.ca.cert} (CA; its key ${files.ca.key} stays here, mounted nowhere)\n${files.server.cert}\n${files.client.cert}\n`,
  );
} catch (err) {
  process.stderr.write(`make-temporal-certs: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
