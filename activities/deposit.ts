import { maskBankAccount, maskCpf } from '../common/mask';
import { bankAccountKey, normaliseBankAccount } from '../contracts/customer';
import type { DepositInput, DepositQr } from '../contracts/deposit';
import type { FlowRecord } from '../contracts/shared';
import { addAccount } from '../db/customers';
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
  pool,
  hashCpf,
  hashAccount,
  recordFlow,
}: Pick<ActivityDeps, 'provider' | 'pool' | 'hashCpf' | 'hashAccount'> & {
  recordFlow: (row: FlowRecord) => Promise<void>;
}) {
  /** The payer's bank account the deposit names, registered as the person's own (idempotent). */
  const registerPayerAccount = async (client: DepositInput['client']) => {
    const account = normaliseBankAccount({
      ispb: client.bankispb,
      branch: client.bankbranch,
      account: client.bankaccount,
    });
    if (!account) return;
    await addAccount(pool, {
      cpfHash: hashCpf(client.cpf),
      cpfMasked: maskCpf(client.cpf),
      kind: 'bank_account',
      pixType: null,
      keyHash: hashAccount(bankAccountKey(account)),
      masked: maskBankAccount(account.ispb, account.branch, account.account),
      source: 'deposit',
    });
  };
  return {
    /**
     * Creates the Pix charge, then writes the deposit's flows row (`awaiting`) once it exists:
     * one local activity does both, so the caller waiting for the QR waits for one. Safe to
     * retry: the provider answers the same QR for the same txid and body (a txid it already holds
     * with another body fails non-retryably, DUPLICATE_TRANSACTION), and the row's write and the
     * payer's bank account (client.bankispb/bankbranch/bankaccount, when given) are idempotent.
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
      await registerPayerAccount(input.client);
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
