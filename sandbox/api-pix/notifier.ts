import https from 'node:https';
import type { Timers } from '../timers';
import type { ApiPixState, DeliveryLogEntry, PixRecord } from './state';
import { pixView } from './views';

// The API Pix webhook: `POST {webhookUrl}/pix` with `{ "pix": [ <Pix with its devolucoes> ] }`
// whenever a Pix paying a cob arrives or one of its returns reaches a final state, to the
// webhook registered for the Pix's key. Over HTTPS with mutual TLS, as the spec asks: the PSP
// presents its webhook client certificate and trusts only the configured CA for the receiver.
// Retried with exponential back-off while the receiver fails (non-2xx or no connection), at most
// `webhookMaxAttempts` times; the fault knobs drop, duplicate and delay posts.

const LOG_LIMIT = 1000;

export interface NotifierOptions {
  webhookClient: { cert: string; key: string; ca: string } | undefined;
  webhookMaxAttempts: number;
  webhookBackoffMs: number;
  webhookTimeoutMs: number;
  logger: { warn(obj: object, msg?: string): void };
}

export class WebhookNotifier {
  private seq = 0;
  private readonly agent: https.Agent;
  private readonly aborts = new AbortController();

  constructor(
    private readonly state: () => ApiPixState,
    private readonly timers: Timers,
    private readonly options: NotifierOptions,
  ) {
    const client = options.webhookClient;
    this.agent = new https.Agent({
      keepAlive: false,
      ...(client ? { cert: client.cert, key: client.key, ca: client.ca } : {}),
    });
  }

  /** Posts this Pix, as it stands now, to its key's webhook (none registered: nothing is sent). */
  notify(pix: PixRecord): void {
    const state = this.state();
    const hook = state.webhooks.get(pix.chave);
    // Only Pix that paid a cob are notified (the spec's "Pix associados a um txid").
    if (!hook || pix.txid === undefined) return;
    const entry: DeliveryLogEntry = {
      seq: ++this.seq,
      url: `${hook.webhookUrl.replace(/\/+$/, '')}/pix`,
      body: { pix: [pixView(pix)] },
      status: 'pending',
      attempts: 0,
      answers: [],
    };
    state.deliveries.push(entry);
    if (state.deliveries.length > LOG_LIMIT) state.deliveries.shift();
    const knobs = state.faults.webhooks;
    if (knobs.dropNext > 0) {
      knobs.dropNext -= 1;
      entry.status = 'dropped';
      return;
    }
    for (let copy = 0; copy <= knobs.duplicate; copy++) {
      this.timers.set(() => void this.attempt(entry, 1), knobs.delayMs);
    }
  }

  private post(entry: DeliveryLogEntry): Promise<number> {
    const body = JSON.stringify(entry.body);
    return new Promise((resolve, reject) => {
      const req = https.request(
        entry.url,
        {
          method: 'POST',
          agent: this.agent,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
          signal: AbortSignal.any([this.aborts.signal, AbortSignal.timeout(this.options.webhookTimeoutMs)]),
        },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
          res.on('error', reject);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  private async attempt(entry: DeliveryLogEntry, attempt: number): Promise<void> {
    entry.attempts += 1;
    let ok = false;
    try {
      const status = await this.post(entry);
      entry.answers.push(status);
      ok = status >= 200 && status < 300;
    } catch (err) {
      entry.answers.push((err as Error).message);
    }
    if (ok) {
      entry.status = 'delivered';
      return;
    }
    if (this.aborts.signal.aborted) return;
    if (attempt >= this.options.webhookMaxAttempts) {
      entry.status = 'gave_up';
      // The origin only: a receiver's path may hold its secret.
      const to = new URL(entry.url).origin;
      this.options.logger.warn({ to, attempts: entry.attempts }, 'api pix webhook gave up');
      return;
    }
    const delay = this.options.webhookBackoffMs * 2 ** (attempt - 1);
    this.timers.set(() => void this.attempt(entry, attempt + 1), delay);
  }

  close(): void {
    this.aborts.abort();
    this.agent.destroy();
  }
}
