import express, { Router } from 'express';
import { z } from 'zod';
import {
  payoutAuthorizationAnswerSchema,
  payoutAuthorizationRequestSchema,
} from '../../contracts/payout-authorization';
import { signedJsonEndpoint } from '../../signed-requests/verify';
import type { SandboxContext } from '../context';
import { parseBody, sendError } from '../http';
import { decisionFor, type EmulatedDecision } from '../payout-authorization';

// The emulated payout authorization's endpoint (the contract's, signed) and its control endpoints.

/** A held question is closed after this, so a caller without a timeout does not hold a socket for good. */
const HOLD_AT_MOST_MS = 10 * 60_000;

/** A deny's reason, bounded as the contract bounds it. */
const denyReason = payoutAuthorizationAnswerSchema.options[1].shape.reason;

const decisionSchema = z
  .object({
    transactionId: z.string().min(1),
    decision: z.enum(['approve', 'deny', 'no_answer']),
    reason: denyReason.optional(),
  })
  .strict()
  .refine((v) => v.decision === 'deny' || v.reason === undefined, {
    path: ['reason'],
    message: 'only with decision deny',
  });

function askRoute(ctx: SandboxContext) {
  return signedJsonEndpoint({
    secret: ctx.options.payoutAuthorizationSecret,
    request: payoutAuthorizationRequestSchema,
    refuse: sendError,
    onUnverified: () => {
      ctx.state.payoutAuthorization.refused++;
    },
    answer: (question, res) => {
      const a = ctx.state.payoutAuthorization;
      a.asked.set(question.transactionId, (a.asked.get(question.transactionId) ?? 0) + 1);
      const answer = decisionFor(a, question.transactionId, question.amountCentavos);
      if (answer.decision === 'no_answer') {
        // Never answered: pixflow's own timeout ends the request by closing its connection.
        a.held++;
        res.on('close', () => {
          a.held--;
        });
        ctx.timers.set(() => {
          if (!res.writableEnded && !res.destroyed) res.destroy();
        }, HOLD_AT_MOST_MS);
        return;
      }
      res.json(answer);
    },
  });
}

/**
 * POST /operator/payout-authorization: the contract's endpoint. Control: POST
 * /sandbox/payout-authorization/decision (one payout's answer from now on), GET
 * /sandbox/payout-authorization.
 */
export function payoutAuthorizationRoutes(ctx: SandboxContext): Router {
  const router = Router();
  router.post('/operator/payout-authorization', ...askRoute(ctx));
  router.post('/sandbox/payout-authorization/decision', express.json(), (req, res) => {
    const body = parseBody(decisionSchema, req.body, res);
    if (!body) return;
    const decision: EmulatedDecision =
      body.decision === 'deny'
        ? { decision: 'deny', reason: body.reason ?? 'sandbox: denied through the control endpoint' }
        : { decision: body.decision };
    ctx.state.payoutAuthorization.decisions.set(body.transactionId, decision);
    res.json({ transactionId: body.transactionId, ...decision });
  });
  router.get('/sandbox/payout-authorization', (_req, res) => {
    const a = ctx.state.payoutAuthorization;
    res.json({
      asked: Object.fromEntries(a.asked),
      refused: a.refused,
      held: a.held,
      decisions: Object.fromEntries(a.decisions),
    });
  });
  return router;
}
