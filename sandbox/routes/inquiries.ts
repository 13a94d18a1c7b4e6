import { Router } from 'express';
import type { InquiryRecord } from '../../connectors/identity-payments/wire/schemas';
import type { SandboxContext } from '../context';
import { faultGate, requireToken } from '../http';
import { depositInquiry } from './deposits';
import { withdrawalInquiry } from './withdrawals';

// GET /dataconnector/transaction/:txid/type/deposit|withdraw — the record, or 404 {message}.

export function inquiryRoutes(ctx: SandboxContext): Router {
  const router = Router();
  const notFound = { message: 'Transaction not found' };
  const inquiryOf: Record<'deposit' | 'withdraw', (id: string) => InquiryRecord | undefined> = {
    deposit: (txid) => {
      const d = ctx.state.deposits.get(txid);
      return d && depositInquiry(ctx, d);
    },
    withdraw: (transactionId) => {
      const w = ctx.state.withdrawals.get(transactionId);
      return w && withdrawalInquiry(w);
    },
  };
  for (const [kind, inquiry] of Object.entries(inquiryOf)) {
    router.get(
      `/dataconnector/transaction/:txid/type/${kind}`,
      faultGate(ctx, 'inquiry'),
      requireToken(ctx),
      (req, res) => {
        const record = inquiry(String(req.params.txid));
        if (!record) res.status(404).json(notFound);
        else res.json(record);
      },
    );
  }
  return router;
}
