import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Eta } from 'eta';
import { Router } from 'express';
import { escapeHtml } from '../common/html';
import { formatBrl } from '../common/money';
import { PEOPLE_TIME_ZONE, peopleClock, peopleDateTime } from '../common/people-time';
import type { SandboxContext } from './context';
import { depositStatus } from './routes/deposits';
import type { LivenessSession } from './state';

// GET /sandbox/console: a page for people trying pixflow. It lists what waits on "the outside world"
// (deposits to pay, payouts to settle or fail, liveness sessions to finish or review) with buttons that
// call the /sandbox control endpoints. The page is the Eta templates in views/, every value escaped,
// and it swaps in GET /sandbox/console/rows every 2 s; nothing is loaded from anywhere but this sandbox.
// Stable data-testid attributes (deposit-<txid>, pay-<txid>, withdrawal-<id>, settle-<id>, fail-<id>,
// liveness-<sessionId>, complete-/approve-/refuse-<sessionId>) are for tests that drive the page.

// escapeHtml rather than Eta's own escaping: it escapes the backtick too.
const eta = new Eta({
  views: path.join(__dirname, 'views'),
  autoEscape: true,
  escapeFunction: escapeHtml,
  cache: true,
});

const RECENT_LIMIT = 10;

/** Minute granularity on purpose: the rows only change (and get swapped) when something happened. */
function until(ms: number, now: number): string {
  const min = Math.floor((ms - now) / 60_000);
  if (min < 1) return 'in less than a minute';
  if (min < 120) return `in ${min} min`;
  return `in ${Math.floor(min / 60)} h ${min % 60} min`;
}

function isLivenessOpen(s: LivenessSession, now: number): boolean {
  return !s.finished && now < s.expiresAtMs;
}

function isLivenessPending(s: LivenessSession, now: number): boolean {
  return isLivenessOpen(s, now) || s.statusVerification === 'manual_approve_pending';
}

const newestFirst = <T>(items: T[], at: (t: T) => number) => items.sort((a, b) => at(b) - at(a));

/** What waits on the outside world (a payer, the bank, the user or an operator), newest first. */
function waiting(ctx: SandboxContext, now: number) {
  const { state } = ctx;
  return {
    deposits: newestFirst(
      [...state.deposits.values()].filter((d) => depositStatus(ctx, d) === 'processing'),
      (d) => Date.parse(d.createdAt),
    ),
    withdrawals: newestFirst(
      [...state.withdrawals.values()].filter((w) => w.status === 'processing'),
      (w) => Date.parse(w.createdAt),
    ),
    sessions: newestFirst(
      [...state.liveness.values()].filter((s) => isLivenessPending(s, now)),
      (s) => s.createdAtMs,
    ),
  };
}

interface Finished {
  kind: 'deposit' | 'withdrawal' | 'liveness';
  id: string;
  value: string;
  status: string;
  atMs: number;
}

/** The last RECENT_LIMIT deposits, payouts and liveness sessions that finished, newest first. */
function recentlyFinished(ctx: SandboxContext, now: number): Finished[] {
  const { state } = ctx;
  const recent: Finished[] = [];
  for (const d of state.deposits.values()) {
    const status = depositStatus(ctx, d);
    if (status === 'processing') continue;
    const atMs = status === 'completed' ? Date.parse(d.paidAt) : d.expiresAtMs;
    recent.push({ kind: 'deposit', id: d.txid, value: formatBrl(d.amountCentavos), status, atMs });
  }
  for (const w of state.withdrawals.values()) {
    if (w.status === 'processing') continue;
    const atMs = Date.parse(w.finishedAt);
    recent.push({
      kind: 'withdrawal',
      id: w.transactionId,
      value: formatBrl(w.amountCentavos),
      status: w.status,
      atMs,
    });
  }
  for (const s of state.liveness.values()) {
    if (isLivenessPending(s, now)) continue;
    // Sessions keep no finish time; creation time orders them well enough for a glance.
    const status = s.finished ? s.statusVerification : 'expired';
    recent.push({ kind: 'liveness', id: s.document, value: '', status, atMs: s.createdAtMs });
  }
  return newestFirst(recent, (r) => r.atMs).slice(0, RECENT_LIMIT);
}

/** What the templates are given: the rows, and how to show a value. */
function rowsData(ctx: SandboxContext) {
  const now = ctx.options.now();
  return {
    ...waiting(ctx, now),
    recent: recentlyFinished(ctx, now),
    brl: formatBrl,
    // São Paulo's clock for people; the <time> element's datetime keeps the instant in UTC.
    clock: peopleClock,
    dateTime: peopleDateTime,
    iso: (ms: number) => new Date(ms).toISOString(),
    until: (ms: number) => until(ms, now),
    isOpen: (s: LivenessSession) => isLivenessOpen(s, now),
    // The sandbox makes the QR a PNG data URL; anything else is not put in an <img src>.
    qrImage: (src: string) => (/^data:image\/png;base64,[A-Za-z0-9+/=]+$/.test(src) ? src : undefined),
    link: (url: string) => (/^https?:\/\//i.test(url) ? url : undefined),
  };
}

export function consoleRoutes(ctx: SandboxContext): Router {
  const router = Router();
  router.get('/sandbox/console', (_req, res) => {
    const nonce = randomBytes(16).toString('base64');
    // Defence in depth behind the escaping: only this page's own script and style run, images only
    // from data: URLs, requests only to this sandbox.
    res
      .set({
        'Content-Security-Policy':
          `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data:; ` +
          `connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      })
      .type('html')
      .send(eta.render('./console', { ...rowsData(ctx), nonce, zone: PEOPLE_TIME_ZONE }));
  });
  // The live part of the page alone, for its 2 s refresh.
  router.get('/sandbox/console/rows', (_req, res) => {
    res
      .set({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' })
      .type('html')
      .send(eta.render('./rows', rowsData(ctx)));
  });
  return router;
}
