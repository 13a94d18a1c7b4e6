import { NotFoundError } from '../errors';
import type { Capability, Connector } from '../types';
import { createProviderClient, type LivenessIdField, type ProviderClientOptions } from './client';
import {
  toDepositCharge,
  toDepositLookup,
  toKycFacts,
  toLivenessSession,
  toPayoutAccepted,
  toPayoutLookup,
  toPayoutReceipt,
  toWirePayer,
  toWirePerson,
} from './transformers';

// The provider of shared/provider-api.md as a pixflow connector: its wire client (client.ts) with
// every answer turned into pixflow's types (transformers.ts). It does KYC, liveness, Pix charges,
// payouts and their receipts; returns of third-party money are not in its document.

/** Everything but returns: its document has no refund. */
export const IDENTITY_PAYMENTS_CAPABILITIES = [
  'kyc',
  'liveness',
  'collect',
  'payout',
  'receipts',
] as const satisfies readonly Capability[];

export interface IdentityPaymentsOptions extends ProviderClientOptions {
  /** The liveness request's id field: as the document's sample, its table, or learnt (`auto`). */
  livenessIdField?: LivenessIdField | 'auto';
}

export type IdentityPaymentsConnector = Connector & {
  /** What the connector learnt of the provider's choices so far (logs, conformance). */
  learnt(): { livenessIdField: LivenessIdField } & ReturnType<
    ReturnType<typeof createProviderClient>['learned']
  >;
};

export function createIdentityPaymentsConnector(options: IdentityPaymentsOptions): IdentityPaymentsConnector {
  const client = createProviderClient(options);
  /** An inquiry's record, or undefined when the provider does not know the id. */
  const inquire = async <T>(read: () => Promise<T>): Promise<T | undefined> => {
    try {
      return await read();
    } catch (err) {
      if (err instanceof NotFoundError) return undefined;
      throw err;
    }
  };
  return {
    name: 'identity-payments',
    capabilities: IDENTITY_PAYMENTS_CAPABILITIES,
    get tokenRequests() {
      return client.tokenRequests;
    },
    learnt: () => ({ ...client.learned(), livenessIdField: client.livenessIdField() }),

    kyc: async (cpf, plan) => toKycFacts(await client.kyc(cpf, plan)),
    startLiveness: async (cpf, request) => toLivenessSession(await client.startLiveness(cpf, request)),

    createCharge: async (request) =>
      toDepositCharge(
        await client.createDeposit({
          merchant: request.merchant,
          client: toWirePayer(request.payer),
          amountCentavos: request.amountCentavos,
          txid: request.txid,
        }),
      ),
    async lookUpDeposit(txid) {
      const tx = await inquire(() => client.getDeposit(txid));
      return tx ? toDepositLookup(tx) : { state: 'not_found' };
    },

    sendPayout: async (request) =>
      toPayoutAccepted(
        await client.createWithdrawal({
          merchant: request.merchant,
          client: toWirePerson(request.payee),
          pixKey: request.pixKey,
          ...(request.pixType === undefined ? {} : { pixType: request.pixType }),
          amountCentavos: request.amountCentavos,
          transactionId: request.transactionId,
        }),
      ),
    async lookUpPayout(transactionId) {
      const tx = await inquire(() => client.getWithdrawal(transactionId));
      return tx ? toPayoutLookup(tx) : { state: 'not_found' };
    },
    payoutReceipt: async (transactionId, merchant) =>
      toPayoutReceipt(await client.getReceipt(transactionId, merchant)),
  };
}
