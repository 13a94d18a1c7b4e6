import { randomBytes } from 'node:crypto';
import { Router } from 'express';
import { escapeHtml } from '../common/html';
import { formatBrl } from '../provider/money';
import type { SandboxContext } from './context';
import { depositStatus } from './routes/deposits';
import type { DepositRecord, LivenessSession, WithdrawalRecord } from './state';

// GET /sandbox/console: a page for people trying pixflow. It lists what waits on "the outside world"
// (deposits to pay, payouts to settle or fail, liveness sessions to finish or review) with buttons that
// call the /sandbox control endpoints. The rows are rendered here, every value escaped, and the page
// swaps in GET /sandbox/console/rows every 2 s; nothing is loaded from anywhere but this sandbox.
// Stable data-testid attributes (deposit-<txid>, pay-<txid>, withdrawal-<id>, settle-<id>, fail-<id>,
// liveness-<sessionId>, complete-/approve-/refuse-<sessionId>) are for tests that drive the page.

const RECENT_LIMIT = 10;

function clock(ms: number): string {
  return `${new Date(ms).toISOString().slice(11, 19)} UTC`;
}

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

// The sandbox makes the QR a PNG data URL; anything else is not put in an <img src>.
function safeImage(src: string): string | undefined {
  return /^data:image\/png;base64,[A-Za-z0-9+/=]+$/.test(src) ? src : undefined;
}

function safeLink(url: string): string | undefined {
  return /^https?:\/\//i.test(url) ? url : undefined;
}

function button(action: string, id: string, label: string, kind: string): string {
  const e = escapeHtml(id);
  return `<button type="button" class="${kind}" data-action="${action}" data-id="${e}" data-testid="${action}-${e}">${label}</button>`;
}

function depositRow(d: DepositRecord, now: number): string {
  const id = escapeHtml(d.txid);
  const img = safeImage(d.result.pixImage);
  const qr = img
    ? `<img class="qr" src="${escapeHtml(img)}" alt="Pix QR code for ${id}" data-testid="qr-${id}">`
    : '<span class="muted">no image</span>';
  return (
    `<tr data-testid="deposit-${id}" data-id="${id}">` +
    `<td>${qr}</td>` +
    `<td><div class="id">${id}</div><div>${escapeHtml(d.client.name)}</div>` +
    `<details><summary>Pix copia e cola</summary><code class="payload">${escapeHtml(d.result.pixPayload)}</code></details></td>` +
    `<td class="money" data-testid="value-${id}">${escapeHtml(formatBrl(d.amountCentavos))}</td>` +
    `<td title="${escapeHtml(new Date(d.expiresAtMs).toISOString())}">${escapeHtml(clock(d.expiresAtMs))}` +
    `<div class="muted">${escapeHtml(until(d.expiresAtMs, now))}</div></td>` +
    `<td class="actions">${button('pay', d.txid, 'Pay', 'go')}</td></tr>`
  );
}

function withdrawalRow(w: WithdrawalRecord): string {
  const id = escapeHtml(w.transactionId);
  return (
    `<tr data-testid="withdrawal-${id}" data-id="${id}">` +
    `<td><div class="id">${id}</div><div>${escapeHtml(w.client.name)}</div></td>` +
    `<td>${escapeHtml(w.pixKey)} <span class="muted">${escapeHtml(w.pixType ?? '')}</span></td>` +
    `<td class="money" data-testid="value-${id}">${escapeHtml(formatBrl(w.amountCentavos))}</td>` +
    `<td>${escapeHtml(clock(Date.parse(w.createdAt)))}</td>` +
    `<td class="actions">${button('settle', w.transactionId, 'Settle', 'go')}${button('fail', w.transactionId, 'Fail', 'stop')}</td></tr>`
  );
}

function livenessRow(s: LivenessSession, now: number): string {
  const id = escapeHtml(s.id);
  const link = safeLink(s.url);
  const open = isLivenessOpen(s, now);
  const actions = open
    ? button('complete', s.id, 'Complete', 'go')
    : `${button('approve', s.id, 'Approve', 'go')}${button('refuse', s.id, 'Refuse', 'stop')}`;
  return (
    `<tr data-testid="liveness-${id}" data-id="${id}" data-document="${escapeHtml(s.document)}">` +
    `<td><div class="id">${escapeHtml(s.document)}</div><div class="muted">${escapeHtml(s.actionType)}</div></td>` +
    `<td><span class="badge">${escapeHtml(s.statusVerification)}</span></td>` +
    `<td>${open ? `${escapeHtml(clock(s.expiresAtMs))}<div class="muted">${escapeHtml(until(s.expiresAtMs, now))}</div>` : '<span class="muted">awaiting review</span>'}</td>` +
    `<td>${open && link ? `<a href="${escapeHtml(link)}" target="_blank" rel="noopener noreferrer">user's page</a>` : ''}</td>` +
    `<td class="actions">${actions}</td></tr>`
  );
}

interface Recent {
  atMs: number;
  html: string;
}

function recentRow(kind: string, id: string, value: string, status: string, atMs: number): Recent {
  const e = escapeHtml(id);
  return {
    atMs,
    html:
      `<tr data-testid="recent-${kind}-${e}"><td>${kind}</td><td class="id">${e}</td>` +
      `<td class="money">${escapeHtml(value)}</td><td><span class="badge ${escapeHtml(status)}">${escapeHtml(status)}</span></td>` +
      `<td>${escapeHtml(clock(atMs))}</td></tr>`,
  };
}

function section(
  testid: string,
  title: string,
  count: number,
  head: string[],
  rows: string[],
  empty: string,
) {
  const body = rows.length
    ? `<table><thead><tr>${head.map((h) => `<th>${h}</th>`).join('')}</tr></thead><tbody>${rows.join('')}</tbody></table>`
    : `<p class="empty">${empty}</p>`;
  return `<section data-testid="${testid}"><h2>${title} <span class="count">${count}</span></h2>${body}</section>`;
}

const newestFirst = <T>(items: T[], at: (t: T) => number) => items.sort((a, b) => at(b) - at(a));

function isLivenessPending(s: LivenessSession, now: number): boolean {
  return isLivenessOpen(s, now) || s.statusVerification === 'manual_approve_pending';
}

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

/** The last RECENT_LIMIT deposits, payouts and liveness sessions that finished, newest first. */
function recentlyFinishedRows(ctx: SandboxContext, now: number): string[] {
  const { state } = ctx;
  const recent: Recent[] = [];
  for (const d of state.deposits.values()) {
    const status = depositStatus(ctx, d);
    if (status === 'processing') continue;
    const at = status === 'completed' ? Date.parse(d.paidAt) : d.expiresAtMs;
    recent.push(recentRow('deposit', d.txid, formatBrl(d.amountCentavos), status, at));
  }
  for (const w of state.withdrawals.values()) {
    if (w.status === 'processing') continue;
    const at = Date.parse(w.finishedAt);
    recent.push(recentRow('withdrawal', w.transactionId, formatBrl(w.amountCentavos), w.status, at));
  }
  for (const s of state.liveness.values()) {
    if (isLivenessPending(s, now)) continue;
    // Sessions keep no finish time; creation time orders them well enough for a glance.
    const status = s.finished ? s.statusVerification : 'expired';
    recent.push(recentRow('liveness', s.document, '', status, s.createdAtMs));
  }
  return newestFirst(recent, (r) => r.atMs)
    .slice(0, RECENT_LIMIT)
    .map((r) => r.html);
}

/** The live part of the page; also served alone for the 2 s refresh. */
export function renderRows(ctx: SandboxContext): string {
  const now = ctx.options.now();
  const pending = waiting(ctx, now);
  const recentRows = recentlyFinishedRows(ctx, now);
  return (
    section(
      'deposits',
      'Deposits awaiting payment',
      pending.deposits.length,
      ['QR code', 'txid / client', 'value', 'expires', ''],
      pending.deposits.map((d) => depositRow(d, now)),
      'No deposit is waiting. Create one through the pixflow API and it shows up here.',
    ) +
    section(
      'withdrawals',
      'Withdrawals in flight',
      pending.withdrawals.length,
      ['transaction / client', 'Pix key', 'value', 'created', ''],
      pending.withdrawals.map(withdrawalRow),
      'No payout is waiting for an outcome.',
    ) +
    section(
      'liveness',
      'Liveness sessions',
      pending.sessions.length,
      ['document', 'status', 'link expires', 'link', ''],
      pending.sessions.map((s) => livenessRow(s, now)),
      'No liveness session is open or awaiting review.',
    ) +
    section(
      'recent',
      'Recently finished',
      recentRows.length,
      ['kind', 'id', 'value', 'status', 'at'],
      recentRows,
      'Nothing finished yet.',
    )
  );
}

const STYLE = `
  :root { color-scheme: light; --ink: #1d2330; --muted: #6b7280; --line: #e5e7eb; --go: #0f7b53; --stop: #b42318; }
  * { box-sizing: border-box; }
  body { margin: 0; font: 15px/1.45 system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; color: var(--ink); background: #f6f7f9; }
  header { display: flex; align-items: baseline; gap: 16px; padding: 16px 24px; background: #12343b; color: #fff; }
  header h1 { margin: 0; font-size: 20px; }
  header p { margin: 0; opacity: .8; font-size: 13px; }
  #status { margin-left: auto; font-size: 13px; opacity: .8; }
  #status.down { color: #fecaca; opacity: 1; }
  main { max-width: 1100px; margin: 0 auto; padding: 16px 24px 48px; }
  #flash { min-height: 24px; margin: 4px 0 8px; font-size: 14px; }
  #flash.ok { color: var(--go); } #flash.err { color: var(--stop); }
  section { background: #fff; border: 1px solid var(--line); border-radius: 10px; padding: 12px 16px; margin-bottom: 16px; }
  h2 { margin: 0 0 8px; font-size: 16px; }
  .count { display: inline-block; min-width: 22px; padding: 0 7px; border-radius: 11px; background: #eef2f7; font-size: 13px; text-align: center; }
  table { width: 100%; border-collapse: collapse; }
  th { text-align: left; font-weight: 600; font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); padding: 6px 8px; border-bottom: 1px solid var(--line); }
  td { padding: 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
  tr:last-child td { border-bottom: 0; }
  .id { font-family: ui-monospace, Menlo, Consolas, monospace; font-size: 13px; word-break: break-all; }
  .money { font-variant-numeric: tabular-nums; font-weight: 600; white-space: nowrap; font-size: 16px; }
  .muted, .empty { color: var(--muted); font-size: 13px; }
  .qr { width: 132px; height: 132px; image-rendering: pixelated; display: block; border: 1px solid var(--line); border-radius: 4px; }
  details summary { cursor: pointer; color: var(--muted); font-size: 12px; margin-top: 4px; }
  .payload { display: block; max-width: 420px; font-size: 11px; word-break: break-all; user-select: all; background: #f3f4f6; padding: 4px 6px; border-radius: 4px; }
  .actions { white-space: nowrap; text-align: right; }
  button { font: inherit; font-weight: 600; border: 0; border-radius: 6px; padding: 7px 14px; margin-left: 6px; color: #fff; cursor: pointer; }
  button.go { background: var(--go); } button.stop { background: var(--stop); }
  button:disabled { opacity: .5; cursor: wait; }
  .badge { font-size: 12px; padding: 1px 8px; border-radius: 10px; background: #eef2f7; }
  .badge.completed, .badge.manual_approved { background: #dcfce7; color: #14532d; }
  .badge.failed, .badge.manual_refused, .badge.expired { background: #fee2e2; color: #7f1d1d; }
`;

// Plain browser JS (no template literals, so it can live in this TS string). Buttons are handled by
// delegation on #rows, so a refresh that swaps the rows mid-click still reaches the right action.
const SCRIPT = `
(function () {
  var rows = document.getElementById('rows');
  var flash = document.getElementById('flash');
  var status = document.getElementById('status');
  var last = null;
  function enc(id) { return encodeURIComponent(id); }
  var actions = {
    pay: function (id) { return ['/sandbox/deposits/' + enc(id) + '/pay', {}, 'Paid deposit ']; },
    settle: function (id) { return ['/sandbox/withdrawals/' + enc(id) + '/settle', {}, 'Settled withdrawal ']; },
    fail: function (id) { return ['/sandbox/withdrawals/' + enc(id) + '/fail', { reason: 'sandbox console: payout failed' }, 'Failed withdrawal ']; },
    complete: function (id) { return ['/sandbox/liveness/complete', { sessionId: id }, 'Completed liveness session ']; },
    approve: function (id) { return ['/sandbox/liveness/review', { sessionId: id, decision: 'approve' }, 'Approved liveness session ']; },
    refuse: function (id) { return ['/sandbox/liveness/review', { sessionId: id, decision: 'refuse' }, 'Refused liveness session ']; }
  };
  function say(text, ok) { flash.textContent = text; flash.className = ok ? 'ok' : 'err'; }
  function refresh() {
    return fetch('/sandbox/console/rows', { cache: 'no-store' })
      .then(function (res) { if (!res.ok) throw new Error('HTTP ' + res.status); return res.text(); })
      .then(function (html) {
        if (html !== last) { rows.innerHTML = html; last = html; }
        status.textContent = 'updated ' + new Date().toISOString().slice(11, 19) + ' UTC';
        status.className = '';
      })
      .catch(function () { status.textContent = 'sandbox unreachable, retrying'; status.className = 'down'; });
  }
  function loop() { refresh().then(function () { setTimeout(loop, 2000); }); }
  rows.addEventListener('click', function (ev) {
    var b = ev.target.closest('button[data-action]');
    if (!b || !actions[b.dataset.action]) return;
    var id = b.dataset.id;
    var a = actions[b.dataset.action](id);
    b.disabled = true;
    fetch(a[0], { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(a[1]) })
      .then(function (res) {
        return res.json().catch(function () { return {}; }).then(function (body) {
          if (res.ok) say(a[2] + id + (body.status ? ': ' + body.status : ''), true);
          else say('Could not ' + b.dataset.action + ' ' + id + ': ' + [].concat(body.message || ('HTTP ' + res.status)).join('; '), false);
        });
      })
      .catch(function (err) { say('Could not reach the sandbox: ' + err.message, false); })
      .then(function () { b.disabled = false; return refresh(); });
  });
  loop();
})();
`;

export function renderPage(ctx: SandboxContext, nonce: string): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8">' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">' +
    `<title>pixflow sandbox console</title><style nonce="${nonce}">${STYLE}</style></head><body>` +
    '<header><h1>pixflow sandbox console</h1><p>Plays the payer, the bank and the user: pay deposits, settle or fail payouts, finish liveness checks.</p>' +
    '<span id="status" data-testid="status"></span></header>' +
    `<main><div id="flash" data-testid="flash" role="status" aria-live="polite"></div><div id="rows">${renderRows(ctx)}</div></main>` +
    `<script nonce="${nonce}">${SCRIPT}</script></body></html>`
  );
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
      .send(renderPage(ctx, nonce));
  });
  router.get('/sandbox/console/rows', (_req, res) => {
    res
      .set({ 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' })
      .type('html')
      .send(renderRows(ctx));
  });
  return router;
}
