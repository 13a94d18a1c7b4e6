import type { LivenessStatus } from '../contracts/flow';
import type { DepositPayer, KycPlan, Payee } from '../contracts/flow-input';
import type { PixType } from '../contracts/pix-key';

// What pixflow asks of a payment or identity provider, and what it gets back, in pixflow's own
// words. Each connector (one folder beside this file) turns its provider's wire into these types
// and its failures into the error kinds of ./errors.ts; nothing outside a connector sees a wire
// shape. Money is integer centavos on this side of every connector.

/** What a connector can do for pixflow. */
export type Capability = 'kyc' | 'liveness' | 'collect' | 'payout' | 'receipts' | 'return';

/** What the registry says of a person, as the rules read it. */
export interface KycFacts {
  /** The CPF's registry situation, lower case (`regular`, `suspenso`, ...); null when it has none. */
  status: string | null;
  under18: boolean;
  deceased: boolean;
  restricted: boolean;
  pep: boolean;
  /** The registry's record as received, kept in Postgres for audit, never in a workflow's history. */
  record: Record<string, unknown>;
}

export interface LivenessRequest {
  correlationId: string;
  plan: KycPlan;
  event: string;
  redirectUrl?: string;
}

/** A liveness link the provider issued, and where the person's check stands. */
export interface LivenessSession {
  transactionId: string;
  url: string;
  qrcode: string;
  type: 'onboarding' | 'biometric_identification';
  status: LivenessStatus;
}

export interface ChargeRequest {
  merchant?: string;
  payer: DepositPayer;
  amountCentavos: number;
  txid: string;
}

/** A Pix charge: the copy-and-paste payload the QR code carries, and until when it can be paid. */
export interface DepositCharge {
  txid: string;
  payload: string;
  expiresAt: string;
  amountCentavos: number;
}

/** What a deposit's inquiry proves. Only `paid` is a payment. */
export type DepositLookup =
  | {
      state: 'paid';
      e2eId: string;
      amountCentavos: number;
      paidAt?: string;
      payerName?: string;
      /** The payer's CPF, digits; absent when the provider left it empty. */
      payerCpf?: string;
      providerStatus: string;
    }
  | { state: 'pending'; providerStatus: string }
  | { state: 'not_found' };

export interface PayoutRequest {
  merchant?: string;
  payee: Payee;
  pixKey: string;
  pixType?: PixType;
  amountCentavos: number;
  transactionId: string;
}

/**
 * The provider took the payout. `e2eId` when its answer carried one. A payout the provider
 * refuses is an error (PayoutRefusedError); one it already holds is a DuplicateTransactionError.
 */
export interface PayoutAccepted {
  e2eId?: string;
}

/** What a payout's inquiry says. Only `completed` and `failed` are outcomes. */
export type PayoutLookup =
  | { state: 'completed'; e2eId?: string; paidAt?: string; providerStatus: string }
  | { state: 'failed'; e2eId?: string; reason?: string; providerStatus: string }
  | { state: 'processing'; e2eId?: string; providerStatus: string }
  | { state: 'not_found' };

/** Where a payout's receipt stands: `completed` with its image once the provider made it. */
export interface PayoutReceipt {
  /** `unreadable`: a code none of the provider's; the payout's inquiry decides alone. */
  state: 'not_found' | 'requested' | 'failed' | 'processing' | 'completed' | 'unreadable';
  /** The provider's own code, for the record. */
  code?: number;
  /** The proof-of-payment image, base64 without a data-URL prefix; absent until it exists. */
  imageBase64?: string;
  paidAt?: string;
  /** What an `unreadable` receipt carried instead of a code. */
  value?: unknown;
}

/** A provider's webhook, as a hint for one flow to look. */
export interface PaymentNotification {
  kind: 'deposit' | 'withdrawal';
  action: 'requested' | 'updated';
  /** The flow's business id (a deposit's txid, a payout's transactionId). */
  id: string;
  partnerId: string;
}

/** A liveness callback: the progress of one liveness request. */
export interface LivenessCallback {
  transactionId: string;
  correlationId: string;
  cpf: string;
  status: LivenessStatus;
  /** The provider's word for the person's step in its flow (free text; `biometric_...` later). */
  step: string;
  type: 'onboarding' | 'biometric_identification';
  event: string;
  at: string;
  partnerId: string;
  /** A status word no rule reads: the progress is kept as `processing` and an operator told. */
  unclassifiedStatus?: string;
}

/**
 * Why money went back to the payer, in pixflow's words (API Pix `natureza`): `original` a return
 * the receiver asked for; `med_operational` and `med_fraud` returns the payer's side started
 * under MED (the Central Bank's special return mechanism); `med_automatic` MED of Pix Automático;
 * `withdrawal` a Pix Saque or Troco's change.
 */
export const returnNatures = [
  'original',
  'withdrawal',
  'med_operational',
  'med_fraud',
  'med_automatic',
] as const;
export type ReturnNature = (typeof returnNatures)[number];

/**
 * A return of a received Pix asked of the connector that received it. `returnId` is pixflow's own
 * id for it, derived from the deposit, so asking twice is asking once.
 */
export interface ReturnRequest {
  /** The received Pix's end-to-end id. */
  e2eId: string;
  returnId: string;
  amountCentavos: number;
  /** Shown to the payer by their bank. */
  description?: string;
}

/** One return of a received Pix, asked by pixflow or started by the payer's side (MED). */
export interface PixReturn {
  returnId: string;
  /** The return's own end-to-end id at the Central Bank, once it has one. */
  rtrId?: string;
  amountCentavos: number;
  nature: ReturnNature;
  /** Only `returned` and `failed` are outcomes. */
  state: 'processing' | 'returned' | 'failed';
  requestedAt?: string;
  returnedAt?: string;
  /** Why it failed, as the PSP said. */
  reason?: string;
  providerStatus: string;
}

/** What a return's inquiry says. */
export type ReturnLookup = PixReturn | { state: 'not_found' };

/** A received Pix, as the PSP holds it, with every return made of it so far. */
export interface ReceivedPix {
  e2eId: string;
  /** The charge it paid, when it paid one. */
  txid?: string;
  amountCentavos: number;
  paidAt: string;
  payerName?: string;
  /** The payer's CPF, digits; absent when the payer is a company or the PSP left it empty. */
  payerCpf?: string;
  returns: PixReturn[];
}

/**
 * A PSP's notice that a Pix was received or one of its returns settled (API Pix webhook), as a
 * hint: the flow confirms it by asking the connector.
 */
export interface PixNotification {
  e2eId: string;
  /** pixflow's txid of the charge it paid; absent for a Pix that paid no charge of pixflow's. */
  txid?: string;
  amountCentavos: number;
  returns: PixReturn[];
}

/** What every connector is: a name, what it can do, its token use. */
export interface ConnectorBase {
  readonly name: string;
  readonly capabilities: readonly Capability[];
  /** Token requests issued so far (metrics, tests). */
  readonly tokenRequests: number;
}

/** `kyc` and `liveness`. */
export interface IdentityOperations {
  kyc(cpf: string, plan: KycPlan): Promise<KycFacts>;
  startLiveness(cpf: string, request: LivenessRequest): Promise<LivenessSession>;
}

/** `collect`: a Pix charge and the proof it was paid. */
export interface CollectOperations {
  createCharge(request: ChargeRequest): Promise<DepositCharge>;
  lookUpDeposit(txid: string): Promise<DepositLookup>;
}

/** `payout` and `receipts`. */
export interface PayoutOperations {
  sendPayout(request: PayoutRequest): Promise<PayoutAccepted>;
  lookUpPayout(transactionId: string): Promise<PayoutLookup>;
  payoutReceipt(transactionId: string, merchant?: string): Promise<PayoutReceipt>;
}

/** `return`: money received sent back to its payer, and the returns the payer's side started. */
export interface ReturnOperations {
  /** Asks for the return; the same `returnId` again answers the return already asked. */
  requestReturn(request: ReturnRequest): Promise<PixReturn>;
  lookUpReturn(e2eId: string, returnId: string): Promise<ReturnLookup>;
  /** The received Pix with all its returns; undefined when the PSP does not know the e2eId. */
  lookUpReceivedPix(e2eId: string): Promise<ReceivedPix | undefined>;
}

/** The provider that does everything (the first one): identity, charges, payouts. */
export interface Connector extends ConnectorBase, IdentityOperations, CollectOperations, PayoutOperations {}

/** A connector deposits can be routed to: it collects, and it may return. */
export type CollectingConnector = ConnectorBase & CollectOperations & Partial<ReturnOperations>;

/** Whether a collecting connector can send money back (declares `return` and has the calls). */
export function canReturn(
  connector: CollectingConnector,
): connector is CollectingConnector & ReturnOperations {
  return (
    connector.capabilities.includes('return') &&
    typeof connector.requestReturn === 'function' &&
    typeof connector.lookUpReturn === 'function'
  );
}

/** The connectors deposits can be routed to, by name (the routing policy names them). */
export interface ConnectorRegistry {
  /** Every collecting connector configured, by name. */
  readonly names: readonly string[];
  /** The collecting connector of that name; undefined when none is configured. */
  collector(name: string): CollectingConnector | undefined;
}
