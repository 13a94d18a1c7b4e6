import { setupVerifiers } from './setup-verifiers';
import {
  ensureSchemathesis,
  ensureTemporalCli,
  ensureTemporalServer,
  ensureTestServer,
  runSetupStep,
  TEMPORAL_SERVER_REPORTED_VERSION,
  temporalCliVersion,
} from './temporal-tools';

// `npm test` and `npm start` run this first: it is instant once the cache folder is filled.
// The Temporal server and its SQL tool are built every time the cache lacks them (minutes, once):
// `npm test` runs pixflow on them (test/production), and `npm start -- --temporal postgres` too.
const cli = runSetupStep(ensureTemporalCli);
const server = runSetupStep(ensureTemporalServer);
const testServer = runSetupStep(ensureTestServer);
const fuzzer = runSetupStep(ensureSchemathesis);
process.stderr.write(`[setup] temporal CLI: ${cli} (${temporalCliVersion(cli).split('\n')[0]})\n`);
process.stderr.write(
  `[setup] temporal server ${TEMPORAL_SERVER_REPORTED_VERSION}: ${server.server}, ${server.sqlTool}\n`,
);
process.stderr.write(`[setup] test server: ${testServer}\n`);
process.stderr.write(`[setup] API fuzzer: ${fuzzer}\n`);
// The event verification examples (clients/verify/) the tests run against real deliveries.
setupVerifiers();
