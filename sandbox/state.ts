import type {
  ActionType,
  DepositClient,
  DepositCreateResult,
  EndpointName,
  PixType,
  Plan,
  StatusVerification,
  WithdrawClient,
} from '../connectors/identity-payments/wire/schemas';
import { type Dialect, DOC_DIALECT } from './dialect';
import { type EligibilityEmulation, emptyEligibility } from './eligibility';
import { defaultFaults, type Faults } from './faults';
import { emptyPayoutAuthorization, type PayoutAuthorizationEmulation } from './payout-authorization';
import type { KycOutcome, LivenessOutcome } from './test-documents';

// Everything the sandbox knows, in memory.

export interface DepositRecord {
  txid: string;
  fingerprint: string;
  merchant: string;
  client: DepositClient;
  amountCentavos: number;
  createdAt: string;
  expiresAtMs: number;
  paid: boolean;
  paidAt: string;
  e2eId: string;
  payerName: string;
  payerCpf: string;
  result: DepositCreateResult;
}

type WithdrawalStatus = 'processing' | 'completed' | 'failed';

export interface WithdrawalRecord {
  transactionId: string;
  merchant: string;
  client: WithdrawClient;
  pixKey: string;
  pixType: PixType | undefined;
  amountCentavos: number;
  createdAt: string;
  status: WithdrawalStatus;
  reason: string | undefined;
  e2eId: string;
  finishedAt: string;
  receiptCalls: number;
}

export interface LivenessSession {
  id: string;
  document: string;
  plan: Plan;
  actionType: ActionType;
  url: string;
  qrcode: string;
  createdAtMs: number;
  expiresAtMs: number;
  /** The user finished the flow (the url is then expired). */
  finished: boolean;
  statusOnboarding: string;
  statusVerification: StatusVerification;
  correlationId: string;
  transactionId: string;
  event: string;
  redirectUrl: string | undefined;
}

export type NotificationPoint = 'deposit' | 'withdraw' | 'liveness';

interface NotificationTarget {
  url: string;
  partnerId: string;
}

export interface NotificationLogEntry {
  seq: number;
  point: NotificationPoint;
  url: string;
  message: Record<string, unknown>;
  status: 'pending' | 'delivered' | 'dropped' | 'gave_up';
  attempts: number;
}

interface Counters {
  requests: Partial<Record<EndpointName, number>>;
  tokenRequests: number;
  tokensIssued: number;
  /** Withdrawals created per transactionId (a payout is counted when the provider accepts it). */
  payouts: Record<string, number>;
  duplicateWithdrawalsRejected: number;
  notificationsSent: number;
  notificationsDropped: number;
  notificationsGaveUp: number;
  notificationAttempts: number;
  notificationFailedAttempts: number;
}

export interface SandboxState {
  tokens: Map<string, number>;
  tokenIssueTimes: number[];
  deposits: Map<string, DepositRecord>;
  withdrawals: Map<string, WithdrawalRecord>;
  liveness: Map<string, LivenessSession>;
  /** Documents whose onboarding was approved: their next liveness call is biometric_identification. */
  onboarded: Set<string>;
  /** A document's registry status changed since its test document says (a later KYC answers it). */
  kycChanges: Map<string, KycOutcome>;
  /** A document's liveness ends as this outcome instead of its test document's. */
  livenessChanges: Map<string, LivenessOutcome>;
  targets: Partial<Record<NotificationPoint, NotificationTarget>>;
  notifications: NotificationLogEntry[];
  counters: Counters;
  faults: Faults;
  auto: { payDepositsAfterMs: number | null; settleWithdrawalsAfterMs: number | null };
  /** Which side of each open point the provider endpoints answer now (./dialect.ts). */
  dialect: Dialect;
  /** The operator's eligibility service, emulated (./eligibility.ts). */
  eligibility: EligibilityEmulation;
  /** The operator's payout authorization, emulated (./payout-authorization.ts). */
  payoutAuthorization: PayoutAuthorizationEmulation;
}

function emptyCounters(): Counters {
  return {
    requests: {},
    tokenRequests: 0,
    tokensIssued: 0,
    payouts: {},
    duplicateWithdrawalsRejected: 0,
    notificationsSent: 0,
    notificationsDropped: 0,
    notificationsGaveUp: 0,
    notificationAttempts: 0,
    notificationFailedAttempts: 0,
  };
}

/** Every point to one URL, as `POST /sandbox/notifications` without `points` registers it. */
function targetsOf(target: NotificationTarget | undefined): SandboxState['targets'] {
  return target ? { deposit: { ...target }, withdraw: { ...target }, liveness: { ...target } } : {};
}

/**
 * `target`: where notifications go from the start (the sandbox's settings), none when unset;
 * `dialect`: the configured one.
 */
export function createState(target?: NotificationTarget, dialect: Dialect = DOC_DIALECT): SandboxState {
  return {
    tokens: new Map(),
    tokenIssueTimes: [],
    deposits: new Map(),
    withdrawals: new Map(),
    liveness: new Map(),
    onboarded: new Set(),
    kycChanges: new Map(),
    livenessChanges: new Map(),
    targets: targetsOf(target),
    notifications: [],
    counters: emptyCounters(),
    faults: defaultFaults(),
    auto: { payDepositsAfterMs: null, settleWithdrawalsAfterMs: null },
    dialect: { default: dialect.default, points: { ...dialect.points } },
    eligibility: emptyEligibility(),
    payoutAuthorization: emptyPayoutAuthorization(),
  };
}

/** Clears everything in place (the same object stays shared by every route). */
export function resetState(state: SandboxState, target?: NotificationTarget, dialect?: Dialect): void {
  Object.assign(state, createState(target, dialect));
}
