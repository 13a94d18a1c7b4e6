import os from 'node:os';
import path from 'node:path';
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
// into BACKOFFICE_SCREENSHOTS (docs/backoffice with `npm run screenshots`).

export const SHOTS = process.env.BACKOFFICE_SCREENSHOTS ?? path.join(os.tmpdir(), 'pixflow-backoffice-shots');
export const WIDTHS = [1280, 390] as const;

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

/** The page at each width: nothing sideways, nothing cut, in words; drawn to `name`-<width>.png. */
export async function drawnAtBothWidths(page: Page, name?: string) {
  const before = page.viewportSize();
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    expect(await problemsOf(page), `${name ?? page.url()} at ${width} px`).toEqual([]);
    if (name) await page.screenshot({ path: path.join(SHOTS, `${name}-${width}.png`), fullPage: true });
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
