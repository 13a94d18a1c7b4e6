import { loadConfigOrExit } from '../common/config';
import { onShutdown } from '../common/http';
import { createLogger } from '../common/logger';
import { SECRETS_READ_BY } from '../common/production-secrets';
import { startSandbox } from './app';
import { type Dialect, DialectError, dialectOf } from './dialect';

async function main() {
  const config = loadConfigOrExit(process.env, { secrets: SECRETS_READ_BY.sandbox });
  const logger = createLogger('sandbox', config.LOG_LEVEL);
  let dialect: Dialect;
  try {
    dialect = dialectOf(config.SANDBOX_DIALECT);
  } catch (err) {
    if (!(err instanceof DialectError)) throw err;
    // As loadConfigOrExit says a wrong variable: one line, no stack.
    process.stderr.write(`pixflow: invalid configuration\n  SANDBOX_DIALECT: ${err.message}\n`);
    process.exit(1);
  }
  // Stops on a signal from the moment it may be asked to: a signal between the port opening and
  // a handler set after it would kill the process without its last words.
  let sandbox: Awaited<ReturnType<typeof startSandbox>> | undefined;
  onShutdown(async (reason) => {
    logger.info({ reason }, 'stopping sandbox');
    await sandbox?.close();
  });
  sandbox = await startSandbox({
    dialect,
    port: config.SANDBOX_PORT,
    host: config.HTTP_HOST,
    clientId: config.provider.clientId,
    clientSecret: config.provider.clientSecret,
    apiKey: config.provider.apiKey,
    merchant: config.provider.merchant,
    livenessUrl: config.PROVIDER_LIVENESS_URL,
    depositExpiryMs: config.SANDBOX_DEPOSIT_EXPIRY_MS,
    livenessUrlValidityMs: config.SANDBOX_LIVENESS_URL_VALIDITY_MS,
    eligibilitySecret: config.ELIGIBILITY_SECRET,
    payoutAuthorizationSecret: config.PAYOUT_AUTHORIZATION_SECRET,
    // The API's ingress from the start: nothing has to register it after both are up.
    notificationTarget: config.SANDBOX_NOTIFICATION_URL
      ? { url: config.SANDBOX_NOTIFICATION_URL, partnerId: config.WEBHOOK_PARTNER_ID }
      : undefined,
    logger,
  });
  logger.info({ url: sandbox.url }, 'provider sandbox listening');
}

main().catch((err) => {
  process.stderr.write(`sandbox failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
