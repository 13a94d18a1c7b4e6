import { randomBytes } from 'node:crypto';
import type { Config } from '../common/config';
import type { Logger } from '../common/logger';
import type { ApiMetrics } from '../common/metrics';
import { startPollingLoop } from '../common/polling-loop';
import {
  lockCursor,
  type Movement,
  movementContextOf,
  movementOfFlow,
  raiseAlert,
  saveCursor,
  triggersAfter,
  WITHDRAWAL_MOVED_STATUSES,
} from '../db/alerts';
import { DEPOSIT_REVERSED, reversalsOf } from '../db/deposit-reversals';
import { sequenceEvents } from '../db/events';
import { tryLockUntilCommit } from '../db/locks';
import { inTransaction, type Pool } from '../db/pool';
import type { PolicyReader } from '../policy/schema';
import { type AlertRuleSettings, evaluateRules, lookbackMs, reversals } from './rules';

// The alert monitor, run by every API process beside the events relay: it reads the outbox (the
// events every flow's status change writes) after its own cursor, evaluates the rules when a
// deposit is credited, a large payout waits for approvers (so they decide with its alerts before
// them) or a payout completes, and writes each alert with its `alert.raised` event.
// The alerts and the cursor's move commit together, under a lock only one process holds at a
// time; an alert is unique per rule, person and flow, so events read again after a crash, or a
// payout evaluated again when it completes, raise nothing twice. No workflow waits for it: alerts flag, they never hold money.

export interface AlertMonitorSettings {
  intervalMs: number;
}

export interface AlertMonitor {
  /** One pass: the events after the cursor, a batch of them; answers how many it read. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * The events the rules look at: money in (credited) and money out (waiting for approvers, or its
 * payout completed), and a credited deposit's money sent back without pixflow asking (reversed).
 */
export const TRIGGERS = [
  'deposit.completed',
  'withdrawal.awaiting_approval',
  'withdrawal.completed',
  DEPOSIT_REVERSED,
] as const;
const BATCH = 200;
const MONITOR_LOCK = 0x706978_616c; // "pix" "al": one monitor reads at a time, across processes

/**
 * Whether the movement still counts when its event is read: a payout read after it waited for
 * approvers may since have been refused or failed, and then moved no money.
 */
const counts = (m: Movement) => m.type !== 'withdrawal' || WITHDRAWAL_MOVED_STATUSES.includes(m.status);

const newAlertId = () => `alr_${randomBytes(16).toString('hex')}`;

/** Evaluates one movement and raises what its rules find; answers the rules that raised. */
async function evaluate(
  client: Parameters<typeof raiseAlert>[0],
  trigger: Movement,
  rules: AlertRuleSettings,
  policyVersion: number,
): Promise<string[]> {
  const t = trigger.at.getTime();
  // One millisecond either side: pg's microseconds against JavaScript's milliseconds.
  const from = new Date(t - lookbackMs(rules) - 1);
  const { movements, registeredAt, recent } = await movementContextOf(
    client,
    trigger.cpfHash,
    from,
    new Date(t + 1),
  );
  const findings = evaluateRules(
    {
      trigger,
      movements: movements.some((m) => m.workflowId === trigger.workflowId)
        ? movements
        : [...movements, trigger],
      registeredAt,
      recent,
    },
    rules,
  );
  const raised: string[] = [];
  for (const f of findings) {
    const isNew = await raiseAlert(client, {
      id: newAlertId(),
      rule: f.rule,
      cpfHash: trigger.cpfHash,
      cpfMasked: trigger.cpfMasked,
      flowId: trigger.workflowId,
      flowIds: f.flowIds,
      facts: f.facts,
      policyVersion,
    });
    if (isNew) raised.push(f.rule);
  }
  return raised;
}

/** A deposit's reversal: the `reversals` rule over every reversal of it so far. */
async function evaluateReversal(
  client: Parameters<typeof raiseAlert>[0],
  trigger: Movement,
  policyVersion: number,
): Promise<string[]> {
  const f = reversals(trigger, await reversalsOf(client, trigger.workflowId));
  if (!f) return [];
  const isNew = await raiseAlert(client, {
    id: newAlertId(),
    rule: f.rule,
    cpfHash: trigger.cpfHash,
    cpfMasked: trigger.cpfMasked,
    flowId: trigger.workflowId,
    flowIds: f.flowIds,
    facts: f.facts,
    policyVersion,
  });
  return isNew ? [f.rule] : [];
}

export interface AlertMonitorDeps {
  pool: Pool;
  log: Logger;
  settings: AlertMonitorSettings;
  /** The rules' thresholds in force, read once a pass; each alert records the version. */
  policy: PolicyReader;
  metrics?: Pick<ApiMetrics, 'countAlert'>;
}

export function startAlertMonitor(deps: AlertMonitorDeps): AlertMonitor {
  const { pool, log, settings } = deps;

  async function runOnce(): Promise<number> {
    // Events get their reading order from the sequencer; the events relay runs it too, but this
    // process may run without one.
    await sequenceEvents(pool);
    const { version, policy } = await deps.policy.current();
    const raisedNow: string[] = [];
    const read = await inTransaction(pool, async (client) => {
      if (!(await tryLockUntilCommit(client, MONITOR_LOCK))) return 0;
      const cursor = await lockCursor(client);
      const events = await triggersAfter(client, cursor, TRIGGERS, BATCH);
      for (const ev of events) {
        const trigger = await movementOfFlow(client, ev.flowId);
        if (!trigger || !counts(trigger)) continue;
        const raised =
          ev.type === DEPOSIT_REVERSED
            ? await evaluateReversal(client, trigger, version)
            : await evaluate(client, trigger, policy.alerts, version);
        if (raised.length) log.info({ rules: raised, flow: ev.flowId }, 'monitoring alerts raised');
        raisedNow.push(...raised);
      }
      const last = events.at(-1);
      if (last) await saveCursor(client, last.position);
      return events.length;
    });
    // Counted once committed: a pass rolled back raised nothing.
    for (const rule of raisedNow) deps.metrics?.countAlert(rule);
    return read;
  }

  // A failed pass committed nothing: the same events are read again on the next one.
  const loop = startPollingLoop({
    pass: runOnce,
    batchSize: BATCH,
    intervalMs: settings.intervalMs,
    log,
    failure: 'alert monitor pass failed; retrying',
  });

  return {
    runOnce,
    stop: () => loop.stop(),
  };
}

/** The monitor's settings from the configuration (common/config.ts); its thresholds are the policy's. */
export function alertMonitorSettings(config: Config): AlertMonitorSettings {
  return { intervalMs: config.ALERT_MONITOR_INTERVAL_MS };
}
