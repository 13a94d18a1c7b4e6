import { z } from 'zod';
import { type DepositState, FIRST_CONNECTOR, RETURNED_BY_RULES } from '../contracts/deposit';
import type { QueueItem } from '../db/backoffice-queues';
import type { Formatter } from './format';
import type { Catalog } from './i18n';

// A deposit's connector and the return of its money, as its case page shows them: from the
// flow's state while it runs, from its row once a return flow of its own wrote it.

/** The connector that received a deposit: its state's, else its row's; none named is the first. */
export function connectorOf(flow: QueueItem, live: DepositState | undefined): string {
  const named = live?.connector ?? flow.details.connector;
  return typeof named === 'string' && named ? named : FIRST_CONNECTOR;
}

/**
 * What `return` does for this deposit: the money goes back through its connector, or, the first
 * provider having no return of received Pix, it is left to be returned by hand.
 */
export const returnChoiceOf = (connector: string, t: Catalog) =>
  connector === FIRST_CONNECTOR
    ? t.flow.returnChoiceByHand(connector)
    : t.flow.returnChoiceThrough(connector);

/** The return as a deposit's row keeps it (its details), checked: the back office reads it as data. */
const rowReturnSchema = z.object({
  connector: z.string().optional(),
  return: z
    .object({
      returnId: z.string(),
      amountCentavos: z.number().int(),
      requestedAt: z.string(),
      state: z.enum(['requested', 'returned', 'failed']),
      by: z.string(),
      rtrId: z.string().optional(),
      returnedAt: z.string().optional(),
      reason: z.string().optional(),
      policyVersion: z.number().int().optional(),
    })
    .optional(),
  returnByHand: z
    .object({ connector: z.string(), why: z.enum(['connector_cannot_return', 'connector_not_configured']) })
    .optional(),
});

export const connectorInRow = (flow: QueueItem) => rowReturnSchema.safeParse(flow.details).data?.connector;

/**
 * Where the deposit's money stands on its way back: the flow's state, else its row (a completed
 * deposit's money is returned by a flow of its own, which writes the deposit's row, not its state).
 */
export function returnOf(
  flow: QueueItem,
  d: DepositState | undefined,
): Pick<DepositState, 'return' | 'returnByHand'> {
  if (d?.return || d?.returnByHand) return d;
  const row = rowReturnSchema.safeParse(flow.details).data;
  return { return: row?.return, returnByHand: row?.returnByHand };
}

/** Where a deposit's money stands on its way back to the payer, as facts. */
export function returnFacts(
  d: Pick<DepositState, 'return' | 'returnByHand'>,
  t: Catalog,
  fmt: Formatter,
): Array<[string, string]> {
  const f = t.flow;
  if (d.returnByHand) return [[f.returnByHand, f.byHandWhy[d.returnByHand.why](d.returnByHand.connector)]];
  const r = d.return;
  if (!r) return [];
  const state =
    r.state === 'returned'
      ? f.returnState.returned(fmt.time(r.returnedAt ?? r.requestedAt))
      : r.state === 'failed'
        ? f.returnState.failed(r.reason ?? t.unknown)
        : f.returnState.requested(fmt.time(r.requestedAt));
  const facts: Array<[string, string]> = [
    [f.return, state],
    [f.returnId, r.returnId],
    [f.returnAmount, fmt.brl(r.amountCentavos)],
    [
      f.returnBy,
      r.by === RETURNED_BY_RULES && r.policyVersion !== undefined ? f.byRules(r.policyVersion) : r.by,
    ],
  ];
  if (r.rtrId) facts.push([f.rtrId, r.rtrId]);
  return facts;
}
