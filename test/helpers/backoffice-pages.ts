import { createHash } from 'node:crypto';
import { closeSync, existsSync, openSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Page } from 'playwright-core';
import { expect } from 'vitest';
import { keyStatuses } from '../../api-keys/admin';
import { catalogs } from '../../backoffice/i18n';
import { biometricsStatuses } from '../../contracts/biometrics';
import { customerVerifications } from '../../contracts/customer';
import { depositStatuses } from '../../contracts/deposit';
import { onboardingStatuses } from '../../contracts/onboarding';
import { withdrawalStatuses } from '../../contracts/withdrawal';
import { actionOutcomes, operatorActionNames } from '../../db/operator-actions';

// What the back office's browser tests check of every page they draw: nothing wider than the
// window or cut, no code shown raw, no ISO date, no date input; and its screenshots at both widths
// into BACKOFFICE_SCREENSHOTS (docs/backoffice with `npm run screenshots`), each described in the
// folder's manifest.json (what test/backoffice/screenshots.test.ts holds against the pages).

export const SHOTS = process.env.BACKOFFICE_SCREENSHOTS ?? path.join(os.tmpdir(), 'pixflow-backoffice-shots');
export const WIDTHS = [1280, 390] as const;

/** The narrowest a text box may be: a typed CPF or id must read whole (the search box was 66 px). */
export const MIN_INPUT_PX = 200;
/** A CPF as pages write it, whole or masked. */
const CPF_PATTERN = String.raw`/(?:\*{3}|\d{3})\.\d{3}\.\d{3}-(?:\*{2}|\d{2})/`;

/** Codes that are plain words: on a page in Portuguese, one of them is a code shown raw. */
const rawWords = new Set<string>(
  [
    ...onboardingStatuses,
    ...depositStatuses,
    ...withdrawalStatuses,
    ...biometricsStatuses,
    ...customerVerifications,
    ...actionOutcomes,
    ...keyStatuses,
  ].filter((c) => /^[a-z]+$/.test(c) && c !== 'kyc'),
);

/**
 * What is wrong with the page as drawn now: anything wider than the window or cut off in its
 * box, a table cell whose content does not fit it, a code shown raw, a date in ISO form, a date
 * input (the browser writes those in its own locale's order, month first in en-US).
 */
export async function problemsOf(page: Page): Promise<string[]> {
  const drawn = (await page.evaluate(`(() => {
    const vw = document.documentElement.clientWidth;
    const out = [];
    const sw = document.documentElement.scrollWidth;
    if (sw > vw) out.push('the page is ' + sw + ' px wide in a ' + vw + ' px window');
    const hidden = (el) => {
      if (el.closest('.sr-only, .skip, caption, head, script, template')) return true;
      const thead = el.closest('thead');
      return !!thead && getComputedStyle(thead).position === 'absolute';
    };
    const what = (el) => el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : '') + ' "' + (el.textContent || '').trim().slice(0, 40) + '"';
    for (const el of document.body.querySelectorAll('*')) {
      if (hidden(el)) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.right > vw + 0.5) out.push(what(el) + ' reaches ' + Math.round(r.right) + ' px');
      const control = ['INPUT', 'SELECT', 'TEXTAREA', 'OPTION'].includes(el.tagName);
      const cell = el.tagName === 'TD' || el.tagName === 'TH';
      const clips = ['auto', 'scroll', 'hidden', 'clip'].includes(getComputedStyle(el).overflowX);
      if (!control && (cell || clips) && el.scrollWidth > el.clientWidth + 1)
        out.push(what(el) + ' is cut: ' + el.scrollWidth + ' px of content in ' + el.clientWidth + ' px');
    }
    if (document.querySelector('input[type=date], input[type=datetime-local]')) out.push('a date input drawn in the browser locale');
    // Controls: a text box an operator can type a whole id or CPF into, a select whose choice
    // reads whole, both inside the window.
    const canvas = document.createElement('canvas').getContext('2d');
    for (const el of document.querySelectorAll('input:not([type=hidden], [type=radio], [type=checkbox]), textarea, select')) {
      const r = el.getBoundingClientRect();
      if (hidden(el) || (r.width === 0 && r.height === 0)) continue;
      if (r.left < -0.5 || r.right > vw + 0.5) out.push(what(el) + '#' + el.id + ' is outside the window: ' + Math.round(r.left) + '..' + Math.round(r.right) + ' px');
      if (el.tagName !== 'SELECT' && r.width < ${MIN_INPUT_PX}) out.push('#' + el.id + ' is only ' + Math.round(r.width) + ' px wide');
      if (el.tagName === 'SELECT') {
        const cs = getComputedStyle(el);
        canvas.font = cs.font;
        const room = el.clientWidth - parseFloat(cs.paddingLeft) - parseFloat(cs.paddingRight);
        const chosen = el.selectedOptions[0];
        const need = chosen ? canvas.measureText(chosen.text).width : 0;
        if (need > room + 1) out.push('#' + el.id + ' cuts "' + chosen.text + '": ' + Math.round(need) + ' px of words in ' + Math.round(room) + ' px');
      }
    }
    // A CPF on one line: broken at its hyphen or dots it reads as two numbers.
    const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const el = n.parentElement;
      if (!el || hidden(el) || !${CPF_PATTERN}.test(n.textContent || '')) continue;
      if (getComputedStyle(el).whiteSpace !== 'nowrap' || el.textContent.trim() !== (n.textContent.match(${CPF_PATTERN}) || [''])[0])
        out.push('a CPF that may wrap: "' + (n.textContent || '').trim().slice(0, 60) + '"');
      else if (el.getClientRects().length !== 1) out.push('a CPF on ' + el.getClientRects().length + ' lines: ' + el.textContent);
    }
    return { out, lang: document.documentElement.lang, text: document.body.innerText };
  })()`)) as { out: string[]; lang: string; text: string };
  const problems = [...drawn.out];
  if (drawn.lang !== 'pt-BR') problems.push(`lang="${drawn.lang}"`);
  // Addresses, API key ids and prefixes are not codes.
  const text = drawn.text.replace(/\S+@\S+/g, '').replace(/\b(?:ak|pxk)_\w+/g, '');
  for (const m of text.match(/\b[a-z0-9]+(?:_[a-z0-9]+)+\b/g) ?? []) problems.push(`a raw code: ${m}`);
  for (const a of operatorActionNames) if (text.includes(a)) problems.push(`a raw action: ${a}`);
  for (const w of text.match(/\b[a-z]+\b/g) ?? []) if (rawWords.has(w)) problems.push(`a raw status: ${w}`);
  for (const m of text.match(/\b\d{4}-\d{2}-\d{2}\b/g) ?? []) problems.push(`an ISO date: ${m}`);
  return problems;
}

/** What a screenshot shows, as the manifest beside the screenshots records it. */
export interface Shot {
  /** The page's path, ids and all. */
  path: string;
  heading: string;
  /** The menu's entries (backoffice/menu.ts ids); none before signing in. */
  menu: string[];
  /** The queues the page lists (the queues page). */
  queues: string[];
  /** Each width's PNG and its SHA-256. */
  files: Record<string, { file: string; sha256: string }>;
}

export const MANIFEST = 'manifest.json';

/** Adds a screenshot to the manifest; the two browser test files draw at once, so under a lock. */
async function recordShot(name: string, shot: Shot) {
  const file = path.join(SHOTS, MANIFEST);
  const lock = `${file}.lock`;
  for (let tries = 0; ; tries++) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      // A lock left by a run that died holds nobody.
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (tries > 500 || Date.now() - since > 10_000) unlinkSync(lock);
      await sleep(20);
    }
  }
  try {
    const shots: Record<string, Shot> = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    shots[name] = shot;
    const sorted = Object.fromEntries(Object.entries(shots).sort(([a], [b]) => a.localeCompare(b)));
    writeFileSync(file, `${JSON.stringify(sorted, null, 2)}\n`);
  } finally {
    unlinkSync(lock);
  }
}

/** The page at each width: nothing sideways, nothing cut, in words; drawn to `name`-<width>.png. */
export async function drawnAtBothWidths(page: Page, name?: string) {
  const before = page.viewportSize();
  const files: Shot['files'] = {};
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    expect(await problemsOf(page), `${name ?? page.url()} at ${width} px`).toEqual([]);
    if (!name) continue;
    const file = `${name}-${width}.png`;
    const png = await page.screenshot({ path: path.join(SHOTS, file), fullPage: true });
    files[String(width)] = { file, sha256: createHash('sha256').update(png).digest('hex') };
  }
  if (name) {
    const shown = (await page.evaluate(`({
      heading: (document.querySelector('h1')?.textContent ?? '').trim(),
      menu: [...document.querySelectorAll('header nav a[data-menu]')].map((a) => a.dataset.menu),
      queues: [...document.querySelectorAll('tr[data-queue]')].map((r) => r.dataset.queue),
    })`)) as Pick<Shot, 'heading' | 'menu' | 'queues'>;
    await recordShot(name, { path: new URL(page.url()).pathname, ...shown, files });
  }
  if (before) await page.setViewportSize(before);
}

/** Chooses and sends a decision on a payout's page (pt-BR) as an approver would. */
export async function decidePayout(
  page: Page,
  baseUrl: string,
  workflowId: string,
  decision: 'approve' | 'refuse',
  reason = '',
) {
  const t = catalogs['pt-BR'];
  await page.goto(`${baseUrl}/backoffice/flows/${workflowId}`);
  await page
    .getByRole('radio', { name: decision === 'approve' ? t.payouts.approveChoice : t.payouts.refuseChoice })
    .check();
  await page.getByLabel(t.payouts.reasonLabel).fill(reason);
  await page.getByRole('button', { name: t.payouts.record }).click();
  await page.getByRole('heading', { level: 1 }).waitFor();
}
