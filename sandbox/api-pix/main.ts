import path from 'node:path';
import { loadConfigOrExit } from '../../common/config';
import { onShutdown } from '../../common/http';
import { createLogger } from '../../common/logger';
import { SECRETS_READ_BY } from '../../common/production-secrets';
import { startApiPixSandboxWithPki } from './index';

/** The emulation's account when pixflow's API Pix settings name none: the development defaults. */
const DEV_ACCOUNT = {
  clientId: 'pixflow-api-pix',
  clientSecret: 'dev-api-pix-secret',
  pixKey: 'pix@pixflow.dev',
};

// The API Pix emulation as a process (`npm start` runs it beside the first provider's sandbox):
// its test certificates made or kept in SANDBOX_API_PIX_PKI_DIR, the account pixflow's own
// API_PIX_* settings name, HTTPS requiring a client certificate of its CA.
async function main() {
  const config = loadConfigOrExit(process.env, { secrets: SECRETS_READ_BY.sandbox });
  const logger = createLogger('api-pix-sandbox', config.LOG_LEVEL);
  const account = config.apiPix ?? DEV_ACCOUNT;
  // Stops on a signal from the moment it may be asked to, as the first provider's sandbox does.
  let sandbox: Awaited<ReturnType<typeof startApiPixSandboxWithPki>> | undefined;
  onShutdown(async (reason) => {
    logger.info({ reason }, 'stopping API Pix sandbox');
    await sandbox?.close();
  });
  sandbox = await startApiPixSandboxWithPki(
    config.SANDBOX_API_PIX_PKI_DIR ?? path.join(config.DATA_DIR, 'api-pix-pki'),
    {
      port: config.SANDBOX_API_PIX_PORT,
      host: config.HTTP_HOST,
      clientId: account.clientId,
      clientSecret: account.clientSecret,
      pixKeys: [account.pixKey],
      logger,
    },
  );
  logger.info({ url: sandbox.url }, 'API Pix sandbox listening');
}

main().catch((err) => {
  process.stderr.write(`API Pix sandbox failed to start: ${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
