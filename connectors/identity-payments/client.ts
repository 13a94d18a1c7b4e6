import { ContractError } from '../errors';
import { centavosToValue, jsonWithDecimalValue, valueToCentavosOrThrow } from './money';
import {
  checkRequest,
  createTransport,
  type ProviderClientOptions,
  type ProviderTransport,
  parseResponse,
} from './transport';
import {
  type DepositClient,
  type DepositCreateResult,
  depositCreateRequestSchema,
  depositCreateResultSchema,
  type InquiryRecord,
  inquiryRecordSchema,
  type KycRecordFor,
  kycRecordSchema,
  type LivenessResponse,
  livenessRequestSchema,
  livenessResponseSchema,
  type PixType,
  type Plan,
  type ReceiptResult,
  receiptResultSchema,
  type WithdrawClient,
  type WithdrawCreateResult,
  withdrawCreateRequestSchema,
  withdrawCreateResultSchema,
} from './wire/schemas';

// The provider's endpoints as typed methods, by family: identity (KYC, liveness), deposits,
// withdrawals (payouts and their receipts), and the inquiry both kinds of transaction share. Money is
// integer centavos on this side; the transport (./transport) does auth, timeouts and error mapping.

export type { ProviderCallEvent, ProviderClientOptions } from './transport';

export interface StartLivenessInput {
  correlationId: string;
  plan: Plan;
  event: string;
  redirectUrl?: string;
}

interface CreateDepositInput {
  merchant?: string;
  client: DepositClient;
  amountCentavos: number;
  txid: string;
}

interface CreateWithdrawalInput {
  merchant?: string;
  client: WithdrawClient;
  pixKey: string;
  pixType?: PixType;
  amountCentavos: number;
  transactionId: string;
}

type DepositCreated = DepositCreateResult & { amountCentavos: number };
type WithdrawalCreated = WithdrawCreateResult & { amountCentavos: number | undefined };
/** Inquiry record plus integer centavos and `paidAt` normalised from payedAt/paidAt ('' when unpaid). */
export type Transaction = InquiryRecord & { amountCentavos: number; paidAt: string };

/** GET /dataconnector/transaction/{id}/type/{kind}: a record of the other kind breaks the contract. */
async function inquireTransaction(
  transport: ProviderTransport,
  kind: 'deposit' | 'withdraw',
  id: string,
): Promise<Transaction> {
  const path = `/dataconnector/transaction/${encodeURIComponent(id)}/type/${kind}`;
  const body = await transport.getWithToken('inquiry', path);
  const record = parseResponse(inquiryRecordSchema, body, 'inquiry');
  if (record.type_transaction !== kind) {
    throw new ContractError(`provider inquiry: expected type_transaction ${kind}`, {
      path: 'type_transaction',
      endpoint: 'inquiry',
      body,
    });
  }
  return {
    ...record,
    amountCentavos: valueToCentavosOrThrow(record.value, 'value'),
    paidAt: record.payedAt || record.paidAt || '',
  };
}

/** KYC lookup and liveness sessions, both keyed by the document (CPF) in the path. */
function identityEndpoints(transport: ProviderTransport) {
  return {
    async kyc<P extends Plan>(document: string, plan: P): Promise<KycRecordFor<P>> {
      const payload = JSON.stringify({ plan });
      const body = await transport.postWithToken('kyc', `/kyc/${encodeURIComponent(document)}`, payload);
      return parseResponse(kycRecordSchema(plan), body, 'kyc') as KycRecordFor<P>;
    },

    async startLiveness(document: string, input: StartLivenessInput): Promise<LivenessResponse> {
      const request = checkRequest(
        livenessRequestSchema,
        {
          correlation_id: input.correlationId,
          plan: input.plan,
          event: input.event,
          ...(input.redirectUrl === undefined ? {} : { redirectUrl: input.redirectUrl }),
        },
        'liveness',
      );
      const path = `/kyc-liveness/${encodeURIComponent(document)}`;
      const body = await transport.postWithToken('liveness', path, JSON.stringify(request));
      return parseResponse(livenessResponseSchema, body, 'liveness');
    },
  };
}

/** Pix charges (QR codes) and their status. `value` goes on the wire as the exact decimal. */
function depositEndpoints(transport: ProviderTransport, defaultMerchant: string) {
  return {
    async createDeposit(input: CreateDepositInput): Promise<DepositCreated> {
      const request = checkRequest(
        depositCreateRequestSchema,
        {
          merchant: input.merchant ?? defaultMerchant,
          client: input.client,
          value: centavosToValue(input.amountCentavos),
          txid: input.txid,
        },
        'deposit',
      );
      const { value: _value, ...rest } = request;
      const payload = jsonWithDecimalValue(rest, input.amountCentavos);
      const body = await transport.postWithApiKey('deposit', '/v2/deposit/create', payload);
      const result = parseResponse(depositCreateResultSchema, body, 'deposit');
      return { ...result, amountCentavos: valueToCentavosOrThrow(result.value, 'value') };
    },

    getDeposit(txid: string): Promise<Transaction> {
      return inquireTransaction(transport, 'deposit', txid);
    },
  };
}

/** Pix payouts, their status and their receipts. `value` goes on the wire as the exact decimal. */
function withdrawalEndpoints(transport: ProviderTransport, defaultMerchant: string) {
  return {
    async createWithdrawal(input: CreateWithdrawalInput): Promise<WithdrawalCreated> {
      const request = checkRequest(
        withdrawCreateRequestSchema,
        {
          merchant: input.merchant ?? defaultMerchant,
          client: input.client,
          pixKey: input.pixKey,
          ...(input.pixType === undefined ? {} : { pixType: input.pixType }),
          value: centavosToValue(input.amountCentavos),
          transactionId: input.transactionId,
        },
        'withdraw',
      );
      const { value: _value, ...rest } = request;
      const payload = jsonWithDecimalValue(rest, input.amountCentavos);
      const body = await transport.postWithApiKey('withdraw', '/v2/withdraw/create', payload);
      const result = parseResponse(withdrawCreateResultSchema, body, 'withdraw');
      return {
        ...result,
        amountCentavos:
          result.value === undefined ? undefined : valueToCentavosOrThrow(result.value, 'value'),
      };
    },

    getWithdrawal(transactionId: string): Promise<Transaction> {
      return inquireTransaction(transport, 'withdraw', transactionId);
    },

    async getReceipt(transactionId: string, merchant?: string): Promise<ReceiptResult> {
      const payload = JSON.stringify({ merchant: merchant ?? defaultMerchant, transactionId });
      const body = await transport.postWithApiKey('receipt', '/receipts/merchant/cash-out/generate', payload);
      return parseResponse(receiptResultSchema, body, 'receipt');
    },
  };
}

export function createProviderClient(options: ProviderClientOptions) {
  const transport = createTransport(options);
  return {
    /** Token requests issued by this client so far. */
    get tokenRequests(): number {
      return transport.tokens.tokenRequests;
    },

    /** Drops the cached token (the next call fetches a new one). */
    invalidateToken(): void {
      transport.tokens.invalidate();
    },

    ...identityEndpoints(transport),
    ...depositEndpoints(transport, options.merchant),
    ...withdrawalEndpoints(transport, options.merchant),
  };
}

export type ProviderClient = ReturnType<typeof createProviderClient>;
