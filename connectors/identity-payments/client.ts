import { decimalTextToCentavos } from '../../common/money';
import { BadRequestError, ContractError, UnclassifiedAnswerError } from '../errors';
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
  type KycAnswer,
  kycAnswerSchema,
  type LivenessAnswer,
  livenessAnswerSchema,
  livenessRequestSchema,
  type PixType,
  type Plan,
  type ReceiptResult,
  receiptResultSchema,
  type WithdrawClient,
  type WithdrawCreateResult,
  withdrawCreateRequestSchema,
  withdrawCreateResultSchema,
} from './wire/schemas';

// The provider's endpoints as typed methods over its wire, by family: identity (KYC, liveness),
// deposits, withdrawals (payouts and their receipts), and the inquiry both kinds of transaction
// share. Money is integer centavos on this side; the transport (./transport) does auth, timeouts
// and error mapping; connector.ts turns these answers into pixflow's types.

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
/** What a withdrawal's creation answered: its body when it was an object, or nothing (a 204). */
type WithdrawalCreated = WithdrawCreateResult & { amountCentavos: number | undefined };
/** Inquiry record plus integer centavos and `paidAt` normalised from payedAt/paidAt ('' when unpaid). */
export type Transaction = InquiryRecord & { amountCentavos: number; paidAt: string };

/** The request field spelling a liveness request carries (the document shows both). */
export type LivenessIdField = 'correlation_id' | 'correlationId';

/** An amount as the wire gives it (a number or its decimal text) in centavos. */
export function amountToCentavos(value: number | string, path: string): number {
  if (typeof value === 'number') return valueToCentavosOrThrow(value, path);
  const centavos = decimalTextToCentavos(value);
  if (centavos === null) {
    throw new ContractError(`provider ${path} ${value} is not an amount with at most 2 decimal places`, {
      path,
    });
  }
  return centavos;
}

/** GET /dataconnector/transaction/{id}/type/{kind}: a record of the other kind breaks the contract. */
async function inquireTransaction(
  transport: ProviderTransport,
  kind: 'deposit' | 'withdraw',
  id: string,
): Promise<Transaction> {
  const path = `/dataconnector/transaction/${encodeURIComponent(id)}/type/${kind}`;
  const body = await transport.getWithToken('inquiry', path);
  const record = parseResponse(inquiryRecordSchema, body, 'inquiry');
  if (record.type_transaction.trim().toLowerCase() !== kind) {
    throw new ContractError(`provider inquiry: expected type_transaction ${kind}`, {
      path: 'type_transaction',
      endpoint: 'inquiry',
      body,
    });
  }
  return {
    ...record,
    amountCentavos: amountToCentavos(record.value, 'value'),
    paidAt: record.payedAt || record.paidAt || '',
  };
}

const otherIdField = (f: LivenessIdField): LivenessIdField =>
  f === 'correlation_id' ? 'correlationId' : 'correlation_id';

/**
 * KYC lookup and liveness sessions, both keyed by the document (CPF) in the path. The liveness
 * request's id field is spelled as configured; in `auto`, a refusal naming the field is asked
 * again once with the other spelling, which is then kept for later requests.
 */
function identityEndpoints(transport: ProviderTransport, idFieldSetting: LivenessIdField | 'auto') {
  let idField: LivenessIdField = idFieldSetting === 'auto' ? 'correlation_id' : idFieldSetting;
  const livenessBody = (input: StartLivenessInput, field: LivenessIdField) => {
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
    if (field === 'correlation_id') return JSON.stringify(request);
    const { correlation_id, ...rest } = request;
    return JSON.stringify({ correlationId: correlation_id, ...rest });
  };
  const namesIdField = (err: unknown) =>
    err instanceof BadRequestError && err.fields.some((f) => f === 'correlation_id' || f === 'correlationId');
  return {
    /** The liveness request's id field as last used (the conformance command prints it). */
    livenessIdField(): LivenessIdField {
      return idField;
    },

    async kyc(document: string, plan: Plan): Promise<KycAnswer> {
      const payload = JSON.stringify({ plan });
      const body = await transport.postWithToken('kyc', `/kyc/${encodeURIComponent(document)}`, payload);
      return parseResponse(kycAnswerSchema, body, 'kyc');
    },

    async startLiveness(document: string, input: StartLivenessInput): Promise<LivenessAnswer> {
      const path = `/kyc-liveness/${encodeURIComponent(document)}`;
      let body: unknown;
      try {
        body = await transport.postWithToken('liveness', path, livenessBody(input, idField));
      } catch (err) {
        if (idFieldSetting !== 'auto' || !namesIdField(err)) throw err;
        const other = otherIdField(idField);
        body = await transport.postWithToken('liveness', path, livenessBody(input, other));
        idField = other;
      }
      return parseResponse(livenessAnswerSchema, body, 'liveness');
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
      return { ...result, amountCentavos: amountToCentavos(result.value, 'value') };
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
      // A 2xx took the payout. Its body is not shown in the document: nothing (a 204) says
      // no more than that; anything that is not an object cannot be read, and money may have
      // gone, so it is never a refusal, only an answer to look up again.
      if (body === '' || body === undefined || body === null) return { amountCentavos: undefined };
      const parsed = withdrawCreateResultSchema.safeParse(body);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        throw new UnclassifiedAnswerError('provider withdraw: a 2xx answer pixflow cannot read', {
          op: 'withdraw',
          field: issue?.path.map(String).join('.') || '(body)',
          endpoint: 'withdraw',
          body,
        });
      }
      const result = parsed.data;
      const centavos = result.value == null ? null : amountOrNull(result.value);
      return { ...result, amountCentavos: centavos ?? undefined };
    },

    getWithdrawal(transactionId: string): Promise<Transaction> {
      return inquireTransaction(transport, 'withdraw', transactionId);
    },

    async getReceipt(transactionId: string, merchant?: string): Promise<ReceiptResult> {
      const body = await transport.postReceipt('/receipts/merchant/cash-out/generate', {
        merchant: merchant ?? defaultMerchant,
        transactionId,
      });
      return parseResponse(receiptResultSchema, body, 'receipt');
    },
  };
}

function amountOrNull(value: number | string): number | null {
  try {
    return amountToCentavos(value, 'value');
  } catch {
    return null;
  }
}

export function createProviderClient(
  options: ProviderClientOptions & { livenessIdField?: LivenessIdField | 'auto' },
) {
  const transport = createTransport(options);
  return {
    /** Token requests issued by this client so far. */
    get tokenRequests(): number {
      return transport.tokens.tokenRequests;
    },

    /** The auth header forms and the receipt format the transport learnt (or was set to). */
    learned: () => transport.learned(),

    ...identityEndpoints(transport, options.livenessIdField ?? 'auto'),
    ...depositEndpoints(transport, options.merchant),
    ...withdrawalEndpoints(transport, options.merchant),
  };
}

export type ProviderClient = ReturnType<typeof createProviderClient>;
