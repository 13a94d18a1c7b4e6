import { maskCpf } from '../common/mask';
import type { DepositInput, DepositQr } from '../contracts/deposit';
import type { FlowRecord } from '../contracts/shared';
import { NotFoundError } from '../provider/errors';
import type { ActivityDeps } from './deps';
import { providerCall } from './errors';

export interface DepositCheck {
  paid: boolean;
  e2eId?: string;
  payerName?: string;
  payerCpfMasked?: string;
  paidAt?: string;
  providerStatus?: string;
}

export function createDepositActivities({
  provider,
  recordFlow,
}: Pick<ActivityDeps, 'provider'> & { recordFlow: (row: FlowRecord) => Promise<void> }) {
  return {
    /**
     * Creates the Pix charge, then writes the deposit's flows row (`awaiting`) once it exists:
     * one local activity does both, so the caller waiting for the QR waits for one. Safe to
     * retry: the provider answers the same QR for the same txid and body (a txid it already holds
     * with another body fails non-retryably, DUPLICATE_TRANSACTION), and the row's write is
     * idempotent.
     */
    async createDepositQr(input: DepositInput, awaiting: FlowRecord): Promise<DepositQr> {
      const res = await providerCall(() =>
        provider.createDeposit({
          merchant: input.merchant,
          client: input.client,
          amountCentavos: input.amountCentavos,
          txid: input.txid,
        }),
      );
      await recordFlow(awaiting);
      return {
        txid: res.txid,
        payload: res.pixPayload,
        image: res.pixImage,
        expiresAt: res.expiry,
        amountCentavos: res.amountCentavos,
      };
    },

    /** The deposit inquiry: the only proof of payment (a notification is just a hint). */
    async inquireDeposit(txid: string): Promise<DepositCheck> {
      try {
        const tx = await provider.getDeposit(txid);
        if (tx.status !== 'completed') return { paid: false, providerStatus: tx.status };
        return {
          paid: true,
          providerStatus: tx.status,
          e2eId: tx.e2eId,
          payerName: tx.name_payer || undefined,
          payerCpfMasked: tx.cpf_payer ? maskCpf(tx.cpf_payer) : undefined,
          paidAt: tx.paidAt || undefined,
        };
      } catch (err) {
        // Not visible to the inquiry yet: unpaid as far as we can prove.
        if (err instanceof NotFoundError) return { paid: false, providerStatus: 'not_found' };
        return providerCall(() => Promise.reject(err));
      }
    },
  };
}
