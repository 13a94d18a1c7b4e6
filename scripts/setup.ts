import {
  ensureSchemathesis,
  ensureTemporalCli,
  ensureTestServer,
  runSetupStep,
  temporalCliVersion,
} from './temporal-tools';

// `npm test` and `npm start` run this first: it is instant once the cache folder is filled.
const cli = runSetupStep(ensureTemporalCli);
const testServer = runSetupStep(ensureTestServer);
const fuzzer = runSetupStep(ensureSchemathesis);
process.stderr.write(`[setup] temporal CLI: ${cli} (${temporalCliVersion(cli).split('\n')[0]})\n`);
process.stderr.write(`[setup] test server: ${testServer}\n`);
process.stderr.write(`[setup] API fuzzer: ${fuzzer}\n`);
