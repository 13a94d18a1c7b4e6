import type pg from 'pg';
import type { Connector } from '../../connectors/types';

// The same-work floor's activities: each one provider call (two for a completed payout: the
// inquiry, then its receipt) and one statement on the floor's own table. Each is idempotent, as
// a retried local activity needs: the provider answers the same QR for the same txid and body, a
// payout already created is found by its inquiry, and the row statements converge.

export interface Client {
  externalId: string;
  cpf: string;
  email: string;
  name: string;
}

export interface SameWorkDepositInput {
  txid: string;
  amountCentavos: number;
  client: Client;
}

export interface SameWorkWithdrawalInput {
  transactionId: string;
  amountCentavos: number;
  pixKey: string;
  pixType: 'CPF';
  client: Client;
}

/** The QR the caller waits for. */
export interface Qr {
  payload: string;
  expiry: string;
}

/** The floor's table, created by its worker at start. */
export const SAME_WORK_TABLE = `CREATE TABLE IF NOT EXISTS bench_same_work (
  kind text NOT NULL,
  id text NOT NULL,
  status text NOT NULL,
  receipt bytea,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (kind, id)
)`;

export function sameWorkActivities(provider: Connector, pool: pg.Pool) {
  const insertRow = (kind: string, id: string, status: string) =>
    pool.query('INSERT INTO bench_same_work (kind, id, status) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [
      kind,
      id,
      status,
    ]);
  const updateRow = (kind: string, id: string, status: string, receipt: Buffer | null = null) =>
    pool.query(
      'UPDATE bench_same_work SET status = $3, receipt = coalesce($4, receipt), updated_at = now() WHERE kind = $1 AND id = $2',
      [kind, id, status, receipt],
    );
  return {
    async createDeposit(input: SameWorkDepositInput): Promise<Qr> {
      const created = await provider.createCharge({
        txid: input.txid,
        amountCentavos: input.amountCentavos,
        payer: input.client,
      });
      await insertRow('deposit', input.txid, 'awaiting_payment');
      return { payload: created.payload, expiry: created.expiresAt };
    },
    /** Whether the deposit is paid (`completed`) or not yet (`processing`); the row follows once paid. */
    async settleDeposit(txid: string): Promise<string> {
      const status = (await provider.lookUpDeposit(txid)).state === 'paid' ? 'completed' : 'processing';
      if (status !== 'processing') await updateRow('deposit', txid, status);
      return status;
    },
    async createPayout(input: SameWorkWithdrawalInput): Promise<void> {
      try {
        await provider.sendPayout({ ...input, payee: input.client });
      } catch (err) {
        // A retry after the provider took it: the payout exists, which is what was asked.
        const known = await provider.lookUpPayout(input.transactionId).catch(() => undefined);
        if (!known || known.state === 'not_found') throw err;
      }
      await insertRow('withdrawal', input.transactionId, 'sending');
    },
    /** The payout's outcome; a completed one's receipt image is stored with it. */
    async settlePayout(transactionId: string): Promise<string> {
      const tx = await provider.lookUpPayout(transactionId);
      const status = tx.state === 'completed' || tx.state === 'failed' ? tx.state : 'processing';
      if (status === 'processing') return status;
      const receipt = status === 'completed' ? await provider.payoutReceipt(transactionId) : undefined;
      const image = receipt?.imageBase64 ? Buffer.from(receipt.imageBase64, 'base64') : null;
      await updateRow('withdrawal', transactionId, status, image);
      return status;
    },
  };
}

export type SameWorkActivities = ReturnType<typeof sameWorkActivities>;
