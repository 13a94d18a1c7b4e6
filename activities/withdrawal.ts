import { ApplicationFailure, Context } from '@temporalio/activity';
import {
  BadRequestError,
  DuplicateTransactionError,
  NotFoundError,
  UnclassifiedAnswerError,
} from '../connectors/errors';
import type { Connector, PayoutLookup, PayoutReceipt, PayoutRequest } from '../connectors/types';
import { DEFAULT_BRAND, type FlowRecord } from '../contracts/flow';
import { PAYOUT_REJECTED, type WithdrawalInput, withdrawalWorkflowId } from '../contracts/withdrawal';
import { upsertWithdrawalReceipt } from '../db/flows';
import { recordPayoutDestination } from '../db/payout-destinations';
import { brandConnectorsReader, brandOfCallingFlow } from './brand-connectors';
import type { ActivityDeps } from './deps';
import { providerCall, type UnclassifiedNotice, unclassifiedNotice } from './errors';
import { payeeHashOf } from './withdrawal-rules';

export interface PayoutSent {
  /** true when the payout already existed at the provider and nothing was sent now. */
  alreadyExisted: boolean;
  e2eId?: string;
}

export interface PayoutCheck {
  outcome: 'processing' | 'completed' | 'failed';
  receiptStatus?: number;
  inquiryStatus?: string;
  reason?: string;
  e2eId?: string;
  paidAt?: string;
  /** true when the payout completed and its receipt image was ready, and is now stored. */
  receiptStored: boolean;
  /** true when this look wrote the withdrawal's `completed` row it was given. */
  recorded?: boolean;
}

/**
 * The payout's outcome as its receipt and inquiry tell it (receiptStored: ready, for the caller to
 * store). Either one's understood word decides; what neither says leaves it processing.
 */
function outcomeOf(receipt: PayoutReceipt, tx: PayoutLookup | undefined): PayoutCheck {
  const base = {
    receiptStatus: receipt.code,
    inquiryStatus: tx && tx.state !== 'not_found' ? tx.providerStatus : undefined,
    e2eId: tx && tx.state !== 'not_found' ? tx.e2eId : undefined,
    receiptStored: false,
  };
  if (tx?.state === 'completed' || receipt.state === 'completed') {
    return {
      ...base,
      outcome: 'completed',
      paidAt: (tx?.state === 'completed' ? tx.paidAt : undefined) ?? receipt.paidAt,
      receiptStored: Boolean(receipt.imageBase64),
    };
  }
  if (tx?.state === 'failed' || receipt.state === 'failed') {
    return {
      ...base,
      outcome: 'failed',
      reason: (tx?.state === 'failed' ? tx.reason : undefined) ?? 'provider_reported_failure',
    };
  }
  return { ...base, outcome: 'processing' };
}

/** The row with what only the activity learnt merged into its details. */
function withDetails(row: FlowRecord, learnt: Record<string, unknown>): FlowRecord {
  return { ...row, details: { ...row.details, ...learnt } };
}

/** The payout's inquiry and receipt at `provider`, with what no rule reads told through `notice`. */
function payoutReads(provider: Connector, notice: UnclassifiedNotice) {
  /**
   * The payout as the provider's inquiry reads it; undefined when it does not know the id. A record
   * whose status no rule reads still proves the payout exists: `processing`, and told.
   */
  async function lookUp(
    transactionId: string,
  ): Promise<Exclude<PayoutLookup, { state: 'not_found' }> | undefined> {
    try {
      const tx = await provider.lookUpPayout(transactionId);
      return tx.state === 'not_found' ? undefined : tx;
    } catch (err) {
      if (!(err instanceof UnclassifiedAnswerError)) throw err;
      await notice(err);
      return { state: 'processing', providerStatus: '' };
    }
  }

  /** The receipt; one whose code no rule reads is told, and decides nothing. */
  async function receiptOf(transactionId: string): Promise<PayoutReceipt> {
    const receipt = await provider.payoutReceipt(transactionId);
    if (receipt.state === 'unreadable') {
      await notice(
        new UnclassifiedAnswerError('provider receipt: a status code pixflow does not know', {
          op: 'receipt',
          field: 'status',
        }),
      );
    }
    return receipt;
  }
  return { lookUp, receiptOf };
}

/** The payout as its brand's connector is asked for it. */
function payoutRequestOf(input: WithdrawalInput): PayoutRequest {
  return {
    // Another brand's payout leaves its own account's merchant, whatever the input says.
    ...(input.brand === undefined || input.brand === DEFAULT_BRAND ? { merchant: input.merchant } : {}),
    payee: input.client,
    pixKey: input.pixKey,
    pixType: input.pixType,
    amountCentavos: input.amountCentavos,
    transactionId: input.transactionId,
  };
}

/**
 * Upserts the receipt image (idempotent) under the withdrawal's workflow id, so another brand's
 * withdrawal of the same transactionId keeps its own; answers its size in bytes.
 */
async function saveReceiptIn(
  pool: ActivityDeps['pool'],
  transactionId: string,
  brand: string | undefined,
  receipt: PayoutReceipt,
) {
  const image = Buffer.from(receipt.imageBase64 ?? '', 'base64');
  const workflowId = withdrawalWorkflowId(transactionId, brand);
  await upsertWithdrawalReceipt(pool, { workflowId, transactionId, image, paidAt: receipt.paidAt ?? null });
  return image.length;
}

export function createWithdrawalActivities({
  provider: processProvider,
  collectors,
  connectorsFor,
  pool,
  recordFlow,
  hashCpf,
  hashAccount,
  countUnclassified,
}: Pick<
  ActivityDeps,
  'provider' | 'collectors' | 'connectorsFor' | 'pool' | 'hashCpf' | 'hashAccount' | 'countUnclassified'
> & {
  recordFlow: (row: FlowRecord) => Promise<void>;
}) {
  const notice: UnclassifiedNotice = unclassifiedNotice({ pool, countUnclassified });
  const brands = brandConnectorsReader({ provider: processProvider, collectors, connectorsFor });
  /** The withdrawal's brand's first provider, and its reads: no other brand's account is asked. */
  const atBrand = async (brand: string | undefined) => {
    const provider = await brands.provider(brand ?? DEFAULT_BRAND);
    return { provider, ...payoutReads(provider, notice) };
  };

  const saveReceipt = (transactionId: string, brand: string | undefined, receipt: PayoutReceipt) =>
    saveReceiptIn(pool, transactionId, brand, receipt);

  return {
    /**
     * Sends the payout exactly once. A first attempt sends. Any later attempt follows an unknown
     * outcome (timeout, 5xx, a worker crash), so it looks the transaction up first and sends only
     * if the provider has never seen it; the provider's own rejection of a repeated transactionId
     * is the second guard. A refusal (400, 422, 404) is looked up before it counts: a provider
     * may answer a repeated id that way. An answer no rule reads leaves it `sending`, retried
     * (the retry looks it up first) and told, never failed.
     *
     * It records the withdrawal's flows rows around the send (`sending` before, `processing`
     * after, with the e2eId), instead of local activities of their own: the first workflow task,
     * which the caller's answer waits for, then runs no activity. The writes are idempotent, so
     * every attempt makes them. The payout goes out through the withdrawal's brand's account.
     */
    async sendPayoutAndRecord(
      input: WithdrawalInput,
      sending: FlowRecord,
      processing: FlowRecord,
    ): Promise<PayoutSent> {
      // Before the row: a brand without an account sends nothing and writes nothing.
      const { provider, lookUp } = await atBrand(input.brand);
      await recordFlow(sending);
      const sent = await providerCall(async (): Promise<PayoutSent> => {
        if (Context.current().info.attempt > 1) {
          const existing = await lookUp(input.transactionId);
          if (existing) return { alreadyExisted: true, e2eId: existing.e2eId };
        }
        try {
          const res = await provider.sendPayout(payoutRequestOf(input));
          return { alreadyExisted: false, e2eId: res.e2eId };
        } catch (err) {
          if (err instanceof DuplicateTransactionError) return { alreadyExisted: true };
          if (err instanceof BadRequestError || err instanceof NotFoundError) {
            const existing = await lookUp(input.transactionId);
            if (existing) return { alreadyExisted: true, e2eId: existing.e2eId };
            // Refused on create and unknown to the provider: nothing was sent; the workflow ends
            // the withdrawal failed.
            throw ApplicationFailure.create({
              type: PAYOUT_REJECTED,
              message: err.message,
              nonRetryable: true,
              details: [err.status],
            });
          }
          throw err;
        }
      }, notice);
      // From now on the destination is one the person has been paid to: no step-up for it again.
      await recordPayoutDestination(pool, {
        cpfHash: hashCpf(input.client.cpf),
        payeeHash: payeeHashOf(input, hashAccount),
        transactionId: input.transactionId,
      });
      await recordFlow(withDetails(processing, { e2eId: sent.e2eId }));
      return sent;
    },

    /**
     * Reads the outcome through the inquiry and the receipt status code (0-4). A completed payout
     * whose receipt image is already there has it stored now, from the same read: the common case
     * then needs no separate storeReceipt call (one provider call and one activity fewer), and
     * the withdrawal's `completed` row it was given is recorded too (no activity of its own).
     */
    async checkPayoutAndRecordCompleted(transactionId: string, completed: FlowRecord): Promise<PayoutCheck> {
      const { lookUp, receiptOf } = await atBrand(completed.brand);
      // The receipt first: the inquiry, read after it, is at least as new, so a failure either
      // of them shows comes with the inquiry's reason (not a torn read across the two).
      const { receipt, tx } = await providerCall(async () => {
        const receipt = await receiptOf(transactionId);
        return { receipt, tx: await lookUp(transactionId) };
      }, notice);
      const check = outcomeOf(receipt, tx);
      if (check.receiptStored) await saveReceipt(transactionId, completed.brand, receipt);
      if (check.outcome !== 'completed' || !check.receiptStored) return check;
      await recordFlow(
        withDetails(completed, {
          e2eId: check.e2eId ?? completed.details?.e2eId,
          receiptStatus: check.receiptStatus,
        }),
      );
      return { ...check, recorded: true };
    },

    /**
     * Fetches the receipt image and stores it. The provider makes it with a lag: an empty
     * invoice is a retryable failure, so Temporal keeps asking on its back-off schedule. Asked of
     * the brand of the withdrawal it runs for (its workflow id names it).
     */
    async storeReceipt(transactionId: string): Promise<{ bytes: number }> {
      const brand = brandOfCallingFlow();
      const { receiptOf } = await atBrand(brand);
      const receipt = await providerCall(() => receiptOf(transactionId), notice);
      if (!receipt.imageBase64) {
        throw ApplicationFailure.retryable(`receipt of ${transactionId} not ready yet`, 'RECEIPT_NOT_READY');
      }
      return { bytes: await saveReceipt(transactionId, brand, receipt) };
    },
  };
}
