import { Router } from 'express';
import type { SandboxContext } from '../context';
import { faultGate, requireToken } from '../http';
import { depositInquiry } from './deposits';
import { withdrawalInquiry } from './withdrawals';

// GET /dataconnector/transaction/:txid/type/deposit|withdraw — the record, or 404 {message}.

export function inquiryRoutes(ctx: SandboxContext): Router {
  const router = Router();
  const notFound = { message: 'Transaction not found' };
  router.get(
    '/dataconnector/transaction/:txid/type/deposit',
    faultGate(ctx, 'inquiry'),
    requireToken(ctx),
    (req, res) => {
      const d = ctx.state.deposits.get(String(req.params.txid));
      if (!d) res.status(404).json(notFound);
      else res.json(depositInquiry(ctx, d));
    },
  );
  router.get(
    '/dataconnector/transaction/:txid/type/withdraw',
    faultGate(ctx, 'inquiry'),
    requireToken(ctx),
    (req, res) => {
      const w = ctx.state.withdrawals.get(String(req.params.txid));
      if (!w) res.status(404).json(notFound);
      else res.json(withdrawalInquiry(w));
    },
  );
  return router;
}
