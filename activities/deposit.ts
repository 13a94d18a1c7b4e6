import { maskBankAccount, maskCpf } from '../common/mask';
import type { DepositLookup } from '../connectors/types';
import { bankAccountKey, normaliseBankAccount } from '../contracts/customer';
import {
  type DepositHoldReason,
  type DepositInput,
  type DepositQr,
  THIRD_PARTY_PAYER,
} from '../contracts/deposit';
import { DEFAULT_BRAND, type FlowRecord } from '../contracts/flow';
import { addAccount } from '../db/customers';
import { decidedUnder } from '../policy/brand';
import { brandConnectorsReader } from './brand-connectors';
import { connectorOfDeposit, createDepositRouter } from './deposit-routing';
import type { ActivityDeps } from './deps';
import { providerCall, unclassifiedNotice } from './errors';

/** The QR, and the connector that made its charge (kept in the deposit's state, not its QR). */
export interface RoutedDepositQr extends DepositQr {
  connector: string;
}

export interface DepositCheck {
  paid: boolean;
  e2eId?: string;
  payerName?: string;
  payerCpfMasked?: string;
  paidAt?: string;
  providerStatus?: string;
  /** Asked with the client's CPF, of a paid deposit: whether the person paid it themselves. */
  payerIsClient?: boolean;
  /** Why the paid deposit must wait for an operator instead of being credited (the rules say). */
  hold?: DepositHoldReason;
  /** With a hold: the version of the rules policy that decided it. */
  policyVersion?: number;
  /** With a hold, of a brand with rules of its own: its overrides' version laid on it. */
  brandPolicyVersion?: number;
  /** The `completed` row the inquiry was given is written: the flow has nothing left to record. */
  recorded?: true;
}

const digits = (v: string) => v.replace(/\D/g, '');

/**
 * Whether the payer is the person: a provider may leave the payer's CPF empty, which counts as
 * the person's own (there is no other payer to tell); otherwise the CPFs compare as digits.
 */
export function payerIsClient(cpfPayer: string | undefined, clientCpf: string): boolean {
  if (!cpfPayer?.trim()) return true;
  return digits(cpfPayer) === digits(clientCpf);
}

/** What the inquiry proves of a deposit, and whether the rules hold it. */
function paidCheck(tx: DepositLookup, clientCpf: string | undefined, holdThirdParty: boolean): DepositCheck {
  if (tx.state === 'not_found') return { paid: false, providerStatus: 'not_found' };
  if (tx.state !== 'paid') return { paid: false, providerStatus: tx.providerStatus };
  const own = clientCpf === undefined ? undefined : payerIsClient(tx.payerCpf, clientCpf);
  return {
    paid: true,
    providerStatus: tx.providerStatus,
    e2eId: tx.e2eId,
    payerName: tx.payerName,
    payerCpfMasked: tx.payerCpf ? maskCpf(tx.payerCpf) : undefined,
    paidAt: tx.paidAt,
    ...(own === undefined ? {} : { payerIsClient: own }),
    ...(own === false && holdThirdParty ? { hold: THIRD_PARTY_PAYER } : {}),
  };
}

/** A paid deposit's row details, as the workflow's state gives them (workflows/deposit.ts). */
export function paymentDetails(check: DepositCheck): Record<string, unknown> {
  return { e2eId: check.e2eId ?? '', paidAt: check.paidAt, payerIsClient: check.payerIsClient };
}

export function createDepositActivities({
  provider,
  collectors,
  pool,
  clock,
  hashCpf,
  hashAccount,
  policy,
  recordFlow,
  countUnclassified,
  connectorsFor,
}: Pick<
  ActivityDeps,
  | 'provider'
  | 'collectors'
  | 'connectorsFor'
  | 'pool'
  | 'clock'
  | 'hashCpf'
  | 'hashAccount'
  | 'policy'
  | 'countUnclassified'
> & {
  recordFlow: (row: FlowRecord) => Promise<void>;
}) {
  const notice = unclassifiedNotice({ pool, countUnclassified });
  const router = createDepositRouter({ pool, policy, clock });
  const brands = brandConnectorsReader({ provider, collectors, connectorsFor });
  /** The payer's bank account the deposit names, registered as the person's own (idempotent). */
  const registerPayerAccount = async (client: DepositInput['client']) => {
    if (!client.bankAccount) return;
    const account = normaliseBankAccount({
      ispb: client.bankAccount.ispb,
      branch: client.bankAccount.branch,
      account: client.bankAccount.number,
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
     * Creates the Pix charge at the first connector of the deposits' routing that makes it
     * (activities/deposit-routing.ts), then records the deposit's flows row (`awaiting`, naming
     * that connector) once it exists: one local activity does both, so the caller waiting for the
     * QR waits for one. Safe to retry: a connector answers the same QR for the same txid and body
     * (a txid it already holds with another body fails non-retryably, DUPLICATE_TRANSACTION), and
     * the row's write and the payer's bank account (client.bankAccount, when given) are
     * idempotent. The charge is made at the deposit's brand's connectors, and at no other's.
     */
    async createChargeAndRecordAwaitingPayment(
      input: DepositInput,
      awaiting: FlowRecord,
    ): Promise<RoutedDepositQr> {
      const brand = input.brand ?? DEFAULT_BRAND;
      const { collectors: registry } = await brands.of(brand);
      const { charge: res, connector } = await providerCall(() =>
        router.routeCharge(
          {
            // Another brand's charge goes to its own account's merchant, whatever the input says.
            ...(brand === DEFAULT_BRAND ? { merchant: input.merchant } : {}),
            payer: input.client,
            amountCentavos: input.amountCentavos,
            txid: input.txid,
          },
          registry,
          brand,
        ),
      );
      await recordFlow({ ...awaiting, details: { ...awaiting.details, connector } });
      await registerPayerAccount(input.client);
      // The provider's image (several KB) stays out of history: the API draws it from the payload.
      return {
        txid: res.txid,
        payload: res.payload,
        expiresAt: res.expiresAt,
        amountCentavos: res.amountCentavos,
        connector,
      };
    },

    /**
     * The deposit inquiry: the only proof of payment (a notification is just a hint). Given the
     * client's CPF (the one the deposit was started with), it says whether the person paid it
     * and whether the rules hold it: the payer's CPF stays here, only its masked form goes back
     * into the workflow's history, and the hold is decided by the policy in force (its version
     * goes with the hold).
     * Given the `completed` row the flow writes next, a payment the rules do not hold is recorded
     * here with its payment's details: the flow then ends with no activity of its own for it.
     * An answer no rule reads fails the attempt (retried, and told): never "unpaid".
     * It asks the connector that made the charge (`connector`; unset, from runs before routing:
     * the first provider) of the deposit's brand (the `completed` row's), and no other.
     */
    async inquireDepositAndRecordCompleted(
      txid: string,
      clientCpf: string | undefined,
      completed: FlowRecord,
      connector?: string,
    ): Promise<DepositCheck> {
      const brand = completed.brand ?? DEFAULT_BRAND;
      const at = connectorOfDeposit((await brands.of(brand)).collectors, connector, brand);
      const tx = await providerCall(() => at.lookUpDeposit(txid), notice);
      // Not visible to the inquiry yet: unpaid as far as we can prove.
      const inForce = await policy.current(brand);
      const paid = paidCheck(tx, clientCpf, inForce.policy.deposits.holdThirdParty);
      const check = paid.hold ? { ...paid, ...decidedUnder(inForce) } : paid;
      if (!check.paid || check.hold) return check;
      await recordFlow({ ...completed, details: { ...completed.details, ...paymentDetails(check) } });
      return { ...check, recorded: true };
    },
  };
}
