import type { FlowTimings } from './inputs';

// How long the flows wait. Production defaults here; tests and config shorten them per flow.
export const DEFAULT_TIMINGS = {
  livenessLinkTtlMs: 30 * 60_000,
  onboardingDeadlineMs: 7 * 24 * 3600_000,
  pollScheduleMs: [5_000, 10_000, 30_000, 60_000, 120_000, 300_000],
  withdrawalDeadlineMs: 3 * 24 * 3600_000,
} as const;

export function timings(overrides: Partial<FlowTimings> | undefined): FlowTimings {
  return { ...DEFAULT_TIMINGS, pollScheduleMs: [...DEFAULT_TIMINGS.pollScheduleMs], ...overrides };
}

/** The n-th wait of a back-off schedule; the last entry repeats. */
export function pollDelay(schedule: number[], n: number): number {
  return schedule[Math.min(n, schedule.length - 1)] ?? 60_000;
}
