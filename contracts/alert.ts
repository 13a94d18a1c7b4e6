// Monitoring alerts (docs/monitoring.md): what a rule over a person's movements found. They flag
// suspicious movement for an operator to review or report; they never block money.

/**
 * The rules: many deposits just under a value (structuring), a payout soon after deposits with
 * nothing between (quick in-out), a total over a window (window total), a payout soon after the
 * person registered (new account), a completed deposit's money sent back to its payer without
 * pixflow asking, a MED return above all (reversals: on the first one). Besides them, a flow whose
 * provider answered what pixflow cannot read (provider unclassified): the flow waits, and an
 * operator looks.
 */
export const alertRules = [
  'structuring',
  'quick_in_out',
  'window_total',
  'new_account',
  'reversals',
  'provider_unclassified',
] as const;
export type AlertRule = (typeof alertRules)[number];

/** open until an operator marks it reviewed (nothing to report) or reported (to the authority). */
export const alertStatuses = ['open', 'reviewed', 'reported'] as const;
export type AlertStatus = (typeof alertStatuses)[number];

/** What an operator may mark an alert as, and from which statuses. */
export const alertDecisions = ['reviewed', 'reported'] as const;
export type AlertDecision = (typeof alertDecisions)[number];
/** A reviewed alert may still be reported; a reported one is done. */
export const decidableFrom: Record<AlertDecision, readonly AlertStatus[]> = {
  reviewed: ['open'],
  reported: ['open', 'reviewed'],
};

export const ALERT_RAISED = 'alert.raised';
