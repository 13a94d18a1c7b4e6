import type { Timers } from '../timers';
import type { WebhookNotifier } from './notifier';
import type { ApiPixState } from './state';

interface Logger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface ApiPixOptions {
  clientId: string;
  clientSecret: string;
  /** The account's Pix keys: a cob's `chave` and a webhook's must be one of them. */
  pixKeys: string[];
  /** The PSP's client identity for webhook posts, and the CA it trusts for the receiver. */
  webhookClient?: { cert: string; key: string; ca: string } | undefined;
  /** How long a return stays EM_PROCESSAMENTO. Default 300 ms. */
  returnSettleMs?: number;
  /** A cob's `calendario.expiracao` when the request leaves it out. Default 86400 (the spec's). */
  cobExpiryDefaultS?: number;
  tokenTtlSeconds?: number;
  /** The PSP's ISPB, in the rtrId of the returns it sends. */
  ispb?: string;
  /** The payer's bank's ISPB, in the end-to-end ids of the Pix it sends. */
  payerIspb?: string;
  merchantName?: string;
  merchantCity?: string;
  webhookMaxAttempts?: number;
  webhookBackoffMs?: number;
  webhookTimeoutMs?: number;
  now?: () => number;
  random?: () => number;
  logger?: Logger;
}

export type ResolvedApiPixOptions = Required<Omit<ApiPixOptions, 'webhookClient'>> & {
  webhookClient: ApiPixOptions['webhookClient'];
};

export function resolveApiPixOptions(o: ApiPixOptions): ResolvedApiPixOptions {
  return {
    clientId: o.clientId,
    clientSecret: o.clientSecret,
    pixKeys: [...o.pixKeys],
    webhookClient: o.webhookClient,
    returnSettleMs: o.returnSettleMs ?? 300,
    cobExpiryDefaultS: o.cobExpiryDefaultS ?? 86_400,
    tokenTtlSeconds: o.tokenTtlSeconds ?? 3600,
    ispb: o.ispb ?? '99999010',
    payerIspb: o.payerIspb ?? '99999020',
    merchantName: o.merchantName ?? 'PIXFLOW SANDBOX',
    merchantCity: o.merchantCity ?? 'SAO PAULO',
    webhookMaxAttempts: o.webhookMaxAttempts ?? 5,
    webhookBackoffMs: o.webhookBackoffMs ?? 200,
    webhookTimeoutMs: o.webhookTimeoutMs ?? 5000,
    now: o.now ?? Date.now,
    random: o.random ?? Math.random,
    logger: o.logger ?? { info() {}, warn() {} },
  };
}

export interface ApiPixContext {
  state: ApiPixState;
  options: ResolvedApiPixOptions;
  timers: Timers;
  notifier: WebhookNotifier;
}

export const isoAt = (ms: number): string => new Date(ms).toISOString();
