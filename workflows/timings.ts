import type { FlowTimings } from './inputs';

// How long the flows wait. Production defaults here; tests and config shorten them per flow.
export const DEFAULT_TIMINGS = {
  livenessLinkTtlMs: 30 * 60_000,
  onboardingDeadlineMs: 7 * 24 * 3600_000,
  // Reconciliation is the backstop for a lost notification, not the way payments arrive: look
  // soon after creation, when most Pix are paid, then rarely (hourly; a 30-minute QR gets its
  // last look at expiry instead). Every look costs a timer, an activity and two workflow tasks
  // per open flow: with 10,000 deposits open, 5-minute polls alone were 33 inquiries a second.
  pollScheduleMs: [30_000, 120_000, 600_000, 3_600_000],
  withdrawalDeadlineMs: 3 * 24 * 3600_000,
} as const;

export function timings(overrides: Partial<FlowTimings> | undefined): FlowTimings {
  return { ...DEFAULT_TIMINGS, pollScheduleMs: [...DEFAULT_TIMINGS.pollScheduleMs], ...overrides };
}

/** The n-th wait of a back-off schedule; the last entry repeats. */
export function pollDelay(schedule: number[], n: number): number {
  return schedule[Math.min(n, schedule.length - 1)] ?? 60_000;
}

/**
 * Retries of provider calls: 1 s doubling to at most 15 s, forever (business 4xx errors are
 * non-retryable and stop at once). A short cap means flows resume within seconds once a
 * provider outage or a burst of faults ends, instead of waiting out a long back-off.
 */
export const PROVIDER_RETRY = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '15s',
} as const;
