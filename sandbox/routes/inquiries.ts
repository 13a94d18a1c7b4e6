import { Router } from 'express';
import { centavosToDecimal } from '../../common/money';
import type { InquiryRecord } from '../../connectors/identity-payments/wire/schemas';
import type { SandboxContext } from '../context';
import { INQUIRY_STATUS_WORDS, type InquiryStatus, sideOf } from '../dialect';
import { faultGate, requireToken } from '../http';
import { depositInquiry } from './deposits';
import { withdrawalInquiry } from './withdrawals';

// GET /dataconnector/transaction/:txid/type/deposit|withdraw — the record, or 404 {message}. The
// record is built once (depositInquiry, withdrawalInquiry: what the sandbox's own pages and
// controls show) and written in the dialect: `inquiry.status` picks the status words,
// `inquiry.empty` whether an empty field is "" (and the paid time `payedAt`, `value` a number) or
// null (`paidAt`, `value` a decimal string).

interface Found {
  record: InquiryRecord;
  amountCentavos: number;
}

/** The record as the dialect writes it on the wire. */
export function inquiryInDialect(ctx: SandboxContext, { record, amountCentavos }: Found) {
  const status =
    sideOf(ctx, 'inquiry.status') === 'doc'
      ? record.status
      : (INQUIRY_STATUS_WORDS[record.status as InquiryStatus]?.other ?? record.status);
  if (sideOf(ctx, 'inquiry.empty') === 'doc') return { ...record, status };
  const { payedAt, ...rest } = { ...record, status };
  const nulled = Object.fromEntries(
    Object.entries({ ...rest, paidAt: payedAt }).map(([k, v]) => [k, v === '' ? null : v]),
  );
  return { ...nulled, value: centavosToDecimal(amountCentavos) };
}

export function inquiryRoutes(ctx: SandboxContext): Router {
  const router = Router();
  const notFound = { message: 'Transaction not found' };
  const inquiryOf: Record<'deposit' | 'withdraw', (id: string) => Found | undefined> = {
    deposit: (txid) => {
      const d = ctx.state.deposits.get(txid);
      return d && { record: depositInquiry(ctx, d), amountCentavos: d.amountCentavos };
    },
    withdraw: (transactionId) => {
      const w = ctx.state.withdrawals.get(transactionId);
      return w && { record: withdrawalInquiry(w), amountCentavos: w.amountCentavos };
    },
  };
  for (const [kind, inquiry] of Object.entries(inquiryOf)) {
    router.get(
      `/dataconnector/transaction/:txid/type/${kind}`,
      faultGate(ctx, 'inquiry'),
      requireToken(ctx, 'bearer'),
      (req, res) => {
        const found = inquiry(String(req.params.txid));
        if (!found) res.status(404).json(notFound);
        else res.json(inquiryInDialect(ctx, found));
      },
    );
  }
  return router;
}
