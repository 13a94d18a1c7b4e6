import type { Logger } from '../common/logger';
import type { ApiPixConnector } from '../connectors/api-pix';

/** How often the registration is tried again while the PSP does not take it. */
const RETRY_MS = 60_000;

/**
 * Tells the PSP where to post the account's webhooks (PUT /webhook/{chave}) unless it already
 * posts there. Deposits do not depend on it (each is also looked up, and reversals are swept), so
 * a PSP that refuses or is down is told in the log and asked again every minute, never fatal.
 * The URL carries the listener's path secret: only its origin is logged.
 */
export function registerApiPixWebhook(
  connector: ApiPixConnector,
  url: string,
  log: Logger,
  stopped: () => boolean,
): void {
  const origin = new URL(url).origin;
  const attempt = async () => {
    try {
      if ((await connector.webhookUrl()) === url) {
        log.info({ origin }, 'API Pix webhook already registered');
        return;
      }
      await connector.registerWebhook(url);
      log.info({ origin }, 'API Pix webhook registered');
    } catch (err) {
      log.warn(
        { origin, err: (err as Error).message },
        'API Pix webhook not registered; trying again in a minute',
      );
      if (!stopped()) setTimeout(attempt, RETRY_MS).unref();
    }
  };
  void attempt();
}
