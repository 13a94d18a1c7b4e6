import { ELIGIBILITY_DEV_SECRET, PAYOUT_AUTHORIZATION_DEV_SECRET } from '../common/config';
import { type Dialect, DOC_DIALECT, dialectOf, type Side } from './dialect';
import type { Notifier } from './notifier';
import type { SandboxState } from './state';
import type { Timers } from './timers';

interface SandboxLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface SandboxOptions {
  clientId?: string;
  clientSecret?: string;
  apiKey?: string;
  merchant?: string;
  /** Public base address of liveness pages; default: the address the request came in on. */
  livenessUrl?: string;
  tokenTtlSeconds?: number;
  /** More than `max` token requests within `windowMs` answer 429. Default 30 per 60 s. */
  tokenRateLimit?: { max: number; windowMs: number };
  /** How long a liveness action.url stays valid (unless the flow completes). Default 30 min. */
  livenessUrlValidityMs?: number;
  /** Deposit QR code lifetime. Default 30 min. */
  depositExpiryMs?: number;
  /** Where every notification point goes from the start (SANDBOX_NOTIFICATION_URL), and after a reset. */
  notificationTarget?: { url: string; partnerId: string };
  notificationMaxAttempts?: number;
  notificationBackoffMs?: number;
  notificationTimeoutMs?: number;
  /** Verifies the emulated eligibility service's requests (ELIGIBILITY_SECRET). */
  eligibilitySecret?: string;
  /** Verifies the emulated payout authorization's requests (PAYOUT_AUTHORIZATION_SECRET). */
  payoutAuthorizationSecret?: string;
  /**
   * Which side of each open point it answers (SANDBOX_DIALECT; ./dialect.ts); default every point
   * on `doc`. `POST /sandbox/reset` comes back to it. An unknown point id throws, naming it.
   */
  dialect?: { default: Side; points: Record<string, Side> };
  now?: () => number;
  random?: () => number;
  logger?: SandboxLogger;
}

export type ResolvedOptions = Required<
  Omit<SandboxOptions, 'livenessUrl' | 'notificationTarget' | 'dialect'>
> & {
  livenessUrl: string | undefined;
  notificationTarget: SandboxOptions['notificationTarget'];
  dialect: Dialect;
};

export function resolveOptions(o: SandboxOptions = {}): ResolvedOptions {
  return {
    clientId: o.clientId ?? 'sandbox-client',
    clientSecret: o.clientSecret ?? 'sandbox-secret',
    apiKey: o.apiKey ?? 'sandbox-api-key',
    merchant: o.merchant ?? 'sandbox-merchant',
    livenessUrl: o.livenessUrl?.replace(/\/+$/, ''),
    tokenTtlSeconds: o.tokenTtlSeconds ?? 3600,
    tokenRateLimit: o.tokenRateLimit ?? { max: 30, windowMs: 60_000 },
    livenessUrlValidityMs: o.livenessUrlValidityMs ?? 30 * 60_000,
    depositExpiryMs: o.depositExpiryMs ?? 30 * 60_000,
    notificationTarget: o.notificationTarget,
    notificationMaxAttempts: o.notificationMaxAttempts ?? 6,
    notificationBackoffMs: o.notificationBackoffMs ?? 250,
    notificationTimeoutMs: o.notificationTimeoutMs ?? 5000,
    eligibilitySecret: o.eligibilitySecret ?? ELIGIBILITY_DEV_SECRET,
    payoutAuthorizationSecret: o.payoutAuthorizationSecret ?? PAYOUT_AUTHORIZATION_DEV_SECRET,
    dialect: o.dialect ? dialectOf(o.dialect) : DOC_DIALECT,
    now: o.now ?? Date.now,
    random: o.random ?? Math.random,
    logger: o.logger ?? { info() {}, warn() {} },
  };
}

export interface SandboxContext {
  state: SandboxState;
  options: ResolvedOptions;
  notifier: Notifier;
  timers: Timers;
}

export function isoNow(ctx: SandboxContext): string {
  return new Date(ctx.options.now()).toISOString();
}
