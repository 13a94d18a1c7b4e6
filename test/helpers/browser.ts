import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

// Debian's chromium driven by playwright-core (no browser download). Missing chromium is a failure,
// never a skip: the console is only proven by a real browser.

export const CHROMIUM_PATH = '/usr/bin/chromium';

export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}: the console tests need a real browser. ` +
        'Install it with `apt-get install -y chromium` (.ci/run does this).',
    );
  }
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
