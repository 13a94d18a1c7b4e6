import type { AlertRule } from '../contracts/alert';
import type { Movement } from '../db/alerts';
import type { Policy } from '../policy/schema';

// The monitoring rules (docs/monitoring.md), as plain functions of one person's movements around
// the one that tripped them: the monitor reads, these decide. A deposit counts when it is
// credited, a withdrawal when it is asked for (and only once it passed the rules: a refused or
// failed payout moved no money). A rule with its bound or window at 0 is off.

/** The rules' thresholds: the policy's `alerts` (docs/policy.md), read for each pass. */
export type AlertRuleSettings = Policy['alerts'];

/** How far back the rules look from a movement: the longest window of a rule that is on. */
export function lookbackMs(s: AlertRuleSettings): number {
  return Math.max(
    s.structuring.belowCentavos > 0 ? s.structuring.windowMs : 0,
    s.quickInOut.windowMs,
    s.windowTotal.aboveCentavos > 0 ? s.windowTotal.windowMs : 0,
  );
}

/** What a rule found: the flows it counted and the values that tripped it. */
export interface Finding {
  rule: AlertRule;
  flowIds: string[];
  facts: Record<string, number | string>;
}

export interface RuleInput {
  /** The movement whose event is evaluated. */
  trigger: Movement;
  /** The person's movements within the lookback up to the trigger, the trigger among them. */
  movements: readonly Movement[];
  /** When the person registered (their onboarding approved), if known. */
  registeredAt?: Date;
  /** The person's alerts for movements within the lookback: the accumulating rules do not repeat. */
  recent: ReadonlyArray<{ rule: string; facts: Record<string, unknown> }>;
}

const sum = (ms: readonly Movement[]) => ms.reduce((n, m) => n + m.amountCentavos, 0);
const iso = (d: Date) => d.toISOString();

/** Whether an alert of `rule` was raised for a movement within `windowMs` up to `t`. */
function flaggedWithin(
  input: RuleInput,
  rule: AlertRule,
  t: number,
  windowMs: number,
  also = (_: Record<string, unknown>) => true,
) {
  return input.recent.some((a) => {
    if (a.rule !== rule || !also(a.facts)) return false;
    const at = Date.parse(String(a.facts.at));
    return at >= t - windowMs && at <= t;
  });
}

/**
 * Structuring: at least `count` deposits each just under the value (within `bandPercent` below
 * it) within the window, the trigger one of them. Once per window: the next such deposits while
 * an alert of it covers the window add nothing new for an operator.
 */
export function structuring(input: RuleInput, s: AlertRuleSettings['structuring']): Finding | undefined {
  const { trigger } = input;
  if (s.belowCentavos <= 0 || trigger.type !== 'deposit') return undefined;
  const from = Math.ceil((s.belowCentavos * (100 - s.bandPercent)) / 100);
  const inBand = (m: Movement) => m.amountCentavos >= from && m.amountCentavos < s.belowCentavos;
  if (!inBand(trigger)) return undefined;
  const t = trigger.at.getTime();
  const deposits = input.movements.filter(
    (m) => m.type === 'deposit' && inBand(m) && m.at.getTime() >= t - s.windowMs && m.at.getTime() <= t,
  );
  if (deposits.length < s.count) return undefined;
  if (flaggedWithin(input, 'structuring', t, s.windowMs)) return undefined;
  return {
    rule: 'structuring',
    flowIds: deposits.map((m) => m.workflowId),
    facts: {
      at: iso(trigger.at),
      deposits: deposits.length,
      totalCentavos: sum(deposits),
      belowCentavos: s.belowCentavos,
      fromCentavos: from,
      windowMs: s.windowMs,
      firstAt: iso(deposits[0]?.at ?? trigger.at),
    },
  };
}

/**
 * Quick in-out: a payout of at least `minCentavos` asked for within the window after deposits
 * with no other payout between them, and at least `sharePercent` of those deposits.
 */
export function quickInOut(input: RuleInput, s: AlertRuleSettings['quickInOut']): Finding | undefined {
  const { trigger } = input;
  if (s.windowMs <= 0 || trigger.type !== 'withdrawal' || trigger.amountCentavos < s.minCentavos)
    return undefined;
  const t = trigger.at.getTime();
  const previous = input.movements
    .filter((m) => m.type === 'withdrawal' && m.workflowId !== trigger.workflowId && m.at.getTime() <= t)
    .at(-1);
  const after = Math.max(t - s.windowMs - 1, previous ? previous.at.getTime() : Number.NEGATIVE_INFINITY);
  const deposits = input.movements.filter(
    (m) => m.type === 'deposit' && m.at.getTime() > after && m.at.getTime() <= t,
  );
  const deposited = sum(deposits);
  if (deposits.length === 0 || deposited <= 0) return undefined;
  if (trigger.amountCentavos * 100 < s.sharePercent * deposited) return undefined;
  const first = deposits[0] as Movement;
  return {
    rule: 'quick_in_out',
    flowIds: [...deposits.map((m) => m.workflowId), trigger.workflowId],
    facts: {
      at: iso(trigger.at),
      withdrawalCentavos: trigger.amountCentavos,
      depositsCentavos: deposited,
      deposits: deposits.length,
      sharePercent: Math.floor((trigger.amountCentavos * 100) / deposited),
      firstDepositAt: iso(first.at),
      afterMs: t - first.at.getTime(),
      windowMs: s.windowMs,
    },
  };
}

/**
 * Window total: the person's credited deposits, or sent payouts, within the window add up to
 * more than the bound, the trigger among them. Once per window and direction.
 */
export function windowTotal(input: RuleInput, s: AlertRuleSettings['windowTotal']): Finding | undefined {
  const { trigger } = input;
  if (s.aboveCentavos <= 0) return undefined;
  const direction = trigger.type === 'deposit' ? 'deposits' : 'withdrawals';
  if (s.of !== 'each' && s.of !== direction) return undefined;
  const t = trigger.at.getTime();
  const counted = input.movements.filter(
    (m) => m.type === trigger.type && m.at.getTime() >= t - s.windowMs && m.at.getTime() <= t,
  );
  const total = sum(counted);
  if (total <= s.aboveCentavos) return undefined;
  if (flaggedWithin(input, 'window_total', t, s.windowMs, (f) => f.direction === direction)) return undefined;
  return {
    rule: 'window_total',
    flowIds: counted.map((m) => m.workflowId),
    facts: {
      at: iso(trigger.at),
      direction,
      totalCentavos: total,
      aboveCentavos: s.aboveCentavos,
      movements: counted.length,
      windowMs: s.windowMs,
    },
  };
}

/** New account: a payout of at least `minCentavos` asked for within the window after the person registered. */
export function newAccount(input: RuleInput, s: AlertRuleSettings['newAccount']): Finding | undefined {
  const { trigger, registeredAt } = input;
  if (s.windowMs <= 0 || trigger.type !== 'withdrawal' || !registeredAt) return undefined;
  if (trigger.amountCentavos < s.minCentavos) return undefined;
  const since = trigger.at.getTime() - registeredAt.getTime();
  if (since > s.windowMs) return undefined;
  return {
    rule: 'new_account',
    flowIds: [trigger.workflowId],
    facts: {
      at: iso(trigger.at),
      withdrawalCentavos: trigger.amountCentavos,
      registeredAt: iso(registeredAt),
      sinceRegistrationMs: Math.max(0, since),
      windowMs: s.windowMs,
    },
  };
}

/** A deposit's reversal as the rule reads it (db/deposit-reversals.ts). */
export interface ReversalFact {
  returnId: string;
  nature: string;
  amountCentavos: number;
  firstSeenAt: string;
}

/**
 * Reversals: money of a person's completed deposit went back to its payer without pixflow asking
 * (a MED return the payer's side started, for fraud or an operational error, or any return
 * pixflow did not ask for). Alerted on the first one, so it needs no threshold; once per deposit
 * (an alert is one per rule, person and flow): the facts count every reversal of it so far.
 */
export function reversals(trigger: Movement, of: readonly ReversalFact[]): Finding | undefined {
  if (trigger.type !== 'deposit') return undefined;
  const last = of.at(-1);
  if (!last) return undefined;
  const reversed = of.reduce((n, r) => n + r.amountCentavos, 0);
  return {
    rule: 'reversals',
    flowIds: [trigger.workflowId],
    facts: {
      at: last.firstSeenAt,
      nature: last.nature,
      reversedCentavos: reversed,
      depositCentavos: trigger.amountCentavos,
      reversals: of.length,
      // Whole once the returns together took all of it.
      partial: reversed < trigger.amountCentavos ? 'partial' : 'whole',
      returnId: last.returnId,
    },
  };
}

/** Every rule's finding on one movement. */
export function evaluateRules(input: RuleInput, s: AlertRuleSettings): Finding[] {
  return [
    structuring(input, s.structuring),
    quickInOut(input, s.quickInOut),
    windowTotal(input, s.windowTotal),
    newAccount(input, s.newAccount),
  ].filter((f): f is Finding => f !== undefined);
}
