import { Router } from 'express';
import type pg from 'pg';
import { z } from 'zod';
import { type DepositReturnInput, depositReturnWorkflowId, FIRST_CONNECTOR } from '../contracts/deposit';
import { DEFAULT_BRAND } from '../contracts/flow';
import { txidSchema } from '../contracts/flow-input';
import { getCustomer } from '../db/customers';
import { type ReturnableDeposit, returnableDeposits } from '../db/deposit-returns';
import {
  closeCustomer,
  type EligibilityRecord,
  eligibilityOfHash,
  lockCustomerEligibility,
  reinstateCustomer,
} from '../db/eligibility';
import { type OperatorActionName, recordAction } from '../db/operator-actions';
import { maySeeFlow } from '../db/operator-brands';
import { recordDecision, sessionRef } from '../db/operator-decisions';
import type { Operator } from '../db/operators';
import { inTransaction, type Pool } from '../db/pool';
import { startDepositReturn } from '../starters/deposit-return';
import type { BackofficeDeps } from './deps';
import { customerDecisionFormSchema, parseForm, say } from './forms';
import type { Catalog } from './i18n';
import { labelsFor } from './i18n';
import { brandsFor, grantedOf } from './operators';
import { BackofficeError, notFoundPage, redirectSaved, signedIn, wordsOf } from './render';
import { roleAtLeast } from './roles';

// Operators' decisions on a person the registry of impeded people names (docs/rules.md,
// Eligibility): close their account, or lift the impediment once the registry answers eligible.
// Each is taken under a lock of the person's row, so two operators cannot both take it, and
// every attempt, taken or not, is a row of the audit trail.

const customerPath = (hash: string) => `/backoffice/customers/${encodeURIComponent(hash)}`;

interface CustomerDecision {
  path: 'close' | 'reinstate';
  action: OperatorActionName;
  /** Applies the decision; undefined when the person was not open to it (nothing changed). */
  apply(
    client: pg.PoolClient,
    hash: string,
    by: string,
    reason: string,
  ): Promise<EligibilityRecord | undefined>;
  refused: (t: Catalog) => { heading: string; message: string };
  done: (t: Catalog) => string;
}

const close: CustomerDecision = {
  path: 'close',
  action: 'customer.close',
  apply: (client, hash, by, reason) => closeCustomer(client, { cpfHash: hash, by, reason, at: new Date() }),
  refused: (t) => ({ heading: t.impeded.notOpen, message: t.impeded.notOpenText }),
  done: (t) => t.impeded.closedDone,
};

// The registry's latest answer must be `eligible`: an operator cannot lift a bar it still holds.
const reinstate: CustomerDecision = {
  path: 'reinstate',
  action: 'customer.reinstate',
  apply: (client, hash) => reinstateCustomer(client, { cpfHash: hash, at: new Date() }),
  refused: (t) => ({ heading: t.impeded.stillImpeded, message: t.impeded.stillImpededText }),
  done: (t) => t.impeded.reinstatedDone,
};

/** The person as an audit row keeps it: open impeded, closed, or eligible. */
const stateOf = (e: EligibilityRecord | undefined) =>
  e && {
    status: e.closed ? 'closed' : e.status,
    registryAnswer: e.registryAnswer,
    ...(e.impeded ? { reason: e.impeded.reason, since: e.impeded.since } : {}),
  };

const auditOf = (operator: Operator) => ({
  operatorId: operator.id,
  operatorEmail: operator.email,
  operatorRole: operator.role,
});

/** The person's completed deposits whose connector returns received Pix (every one but the first provider's). */
export const returnableDepositsOf = (pool: Pool, cpfHash: string, brands: string[] | null) =>
  returnableDeposits(pool, cpfHash, FIRST_CONNECTOR, brands);

/**
 * A deposit as the form names it: its workflow id, which names its brand (`bet-rio:deposit-<txid>`;
 * the default brand's has no prefix), since one txid may be a deposit at each brand.
 */
const depositIdSchema = z
  .string({ error: say('required') })
  .max(100, say('atMost', 100))
  .transform((id, ctx) => {
    const m = /^(?:([a-z][a-z0-9-]{1,39}):)?deposit-(.+)$/.exec(id);
    if (!m?.[2] || !txidSchema.safeParse(m[2]).success) {
      ctx.addIssue({ code: 'custom', message: say('invalid') });
      return z.NEVER;
    }
    return { workflowId: id, brandId: m[1] ?? DEFAULT_BRAND };
  });

/** The ticked deposits (one checkbox sends a text, several a list) and why. */
const returnsFormSchema = z.object({
  reason: customerDecisionFormSchema.shape.reason,
  deposit: z
    .union([depositIdSchema, z.array(depositIdSchema).min(1)], { error: say('required') })
    .transform((v) => {
      const all = Array.isArray(v) ? v : [v];
      return all.filter((d, i) => all.findIndex((x) => x.workflowId === d.workflowId) === i);
    }),
});

export function customerDecisionRoutes({ pool, temporal, config }: BackofficeDeps) {
  const r = Router();
  returnDepositsRoute(r, { pool, temporal, config });
  for (const kind of [close, reinstate]) {
    r.post(`/customers/:hash/${kind.path}`, async (req, res) => {
      const operator = signedIn(res);
      const hash = req.params.hash ?? '';
      const caseId = `customer-${hash}`;
      const back = customerPath(hash);
      const t = wordsOf(req, res);
      if (!roleAtLeast(operator.role, 'reviewer')) {
        await recordAction(pool, {
          ...auditOf(operator),
          action: kind.action,
          outcome: 'refused',
          caseType: 'customer',
          caseId,
        });
        throw new BackofficeError(
          403,
          (w) => ({
            heading: w.errors.notAllowed,
            message: w.impeded.mayNotDecide(labelsFor(w.lang).role(operator.role)),
          }),
          [],
          back,
        );
      }
      const form = parseForm(customerDecisionFormSchema, req.body, back, t);
      if (!(await getCustomer(pool, hash))) throw notFoundPage((w) => w.errors.what.customer);
      const after = await inTransaction(pool, async (client) => {
        const before = await lockCustomerEligibility(client, hash);
        const now = await kind.apply(client, hash, operator.email, form.reason);
        await recordAction(client, {
          ...auditOf(operator),
          action: kind.action,
          outcome: now ? 'done' : 'conflict',
          caseType: 'customer',
          caseId,
          before: stateOf(before),
          after: now ? stateOf(now) : undefined,
          reason: form.reason,
        });
        return now;
      });
      if (!after) throw new BackofficeError(409, kind.refused, [], back);
      req.session.flash = { kind: 'ok', text: kind.done(t) };
      await redirectSaved(req, res, back);
    });
  }
  return r;
}

/** Below reviewer: a 403 page, the attempt audited on the person's case. */
async function refuseBelowReviewer(pool: Pool, operator: Operator, hash: string) {
  if (roleAtLeast(operator.role, 'reviewer')) return;
  await recordAction(pool, {
    ...auditOf(operator),
    action: 'deposit.return',
    outcome: 'refused',
    caseType: 'customer',
    caseId: `customer-${hash}`,
  });
  throw new BackofficeError(
    403,
    (w) => ({
      heading: w.errors.notAllowed,
      message: w.errors.mayNotDecide(labelsFor(w.lang).role(operator.role)),
    }),
    [],
    customerPath(hash),
  );
}

/**
 * Once an impeded person's account is closed, the deposits still returnable go back to their
 * payers: each on its own return flow, through the connector that received it. Returning money to
 * its owner loosens nothing, so one reviewer decides; every deposit asked is a row of the audit
 * trail, on the deposit's case.
 */
function returnDepositsRoute(
  r: Router,
  { pool, temporal, config }: Pick<BackofficeDeps, 'pool' | 'temporal' | 'config'>,
) {
  r.post('/customers/:hash/return-deposits', async (req, res) => {
    const granted = grantedOf(res);
    const operator = signedIn(res);
    const hash = req.params.hash ?? '';
    const back = customerPath(hash);
    const t = wordsOf(req, res);
    // Another brand's deposit is not found before anything else, with nothing started or written.
    const named = [req.body?.deposit].flat().map((v) => depositIdSchema.safeParse(v).data);
    if (named.some((d) => d && !maySeeFlow(granted, { type: 'deposit', brandId: d.brandId })))
      throw notFoundPage((w) =>
        w.errors.what.flowOfType(labelsFor(w.lang).flowType('deposit').toLowerCase()),
      );
    await refuseBelowReviewer(pool, operator, hash);
    const form = parseForm(returnsFormSchema, req.body, back, t);
    const ids = form.deposit.map((d) => d.workflowId);
    const refuse = async (words: (w: Catalog) => { heading: string; message: string }) => {
      await recordAction(pool, {
        ...auditOf(operator),
        action: 'deposit.return',
        outcome: 'conflict',
        caseType: 'customer',
        caseId: `customer-${hash}`,
        after: { deposits: ids },
        reason: form.reason,
      });
      return new BackofficeError(409, words, [], back);
    };
    const eligibility = await eligibilityOfHash(pool, hash);
    if (!eligibility?.closed)
      throw await refuse((w) => ({ heading: w.impeded.notClosed, message: w.impeded.notClosedText }));
    const returnable = new Map(
      (await returnableDepositsOf(pool, hash, brandsFor(res))).map((d) => [d.workflowId, d]),
    );
    const chosen = ids.map((id) => returnable.get(id));
    if (chosen.some((d) => d === undefined))
      throw await refuse((w) => ({ heading: w.impeded.notReturnable, message: w.impeded.notReturnableText }));
    for (const d of chosen as ReturnableDeposit[]) {
      // The flow takes the decision only once its worker reads this record back.
      const decisionId = await recordDecision(pool, {
        workflowId: depositReturnWorkflowId(d.txid, d.brandId),
        kind: 'deposit.return',
        decision: 'return',
        reason: form.reason,
        operatorId: operator.id,
        operatorEmail: operator.email,
        operatorRole: operator.role,
        authenticatedBy: sessionRef(req.sessionID),
      });
      const input: DepositReturnInput = {
        txid: d.txid,
        amountCentavos: d.amountCentavos,
        merchant: d.merchant,
        e2eId: d.e2eId,
        connector: d.connector,
        row: { seq: d.seq, details: d.details },
        by: operator.email,
        decisionId,
        ...(form.reason ? { reason: form.reason } : {}),
      };
      // Under the deposit's brand: its workflow id names it.
      const started = await startDepositReturn(temporal, config.TEMPORAL_TASK_QUEUE, input, d.workflowId);
      await recordAction(pool, {
        ...auditOf(operator),
        action: 'deposit.return',
        outcome: started.outcome === 'started' ? 'done' : 'conflict',
        caseType: 'flow',
        caseId: d.workflowId,
        before: { status: 'completed', connector: d.connector },
        after: { returnFlow: started.workflowId },
        reason: form.reason,
      });
    }
    req.session.flash = { kind: 'ok', text: t.impeded.returnsDone(chosen.length) };
    await redirectSaved(req, res, back);
  });
}
