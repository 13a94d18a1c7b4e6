import { Router } from 'express';
import type pg from 'pg';
import { getCustomer } from '../db/customers';
import {
  closeCustomer,
  type EligibilityRecord,
  lockCustomerEligibility,
  reinstateCustomer,
} from '../db/eligibility';
import { type OperatorActionName, recordAction } from '../db/operator-actions';
import type { Operator } from '../db/operators';
import { inTransaction } from '../db/pool';
import type { BackofficeDeps } from './deps';
import { customerDecisionFormSchema, parseForm } from './forms';
import { type Catalog, labelsFor } from './i18n';
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

export function customerDecisionRoutes({ pool }: BackofficeDeps) {
  const r = Router();
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
