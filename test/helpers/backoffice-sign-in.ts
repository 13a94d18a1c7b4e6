import type { Browser, Page } from 'playwright-core';
import { catalogs } from '../../backoffice/i18n';
import { hashPassword } from '../../common/passwords';
import { type NewOperator, saveOperator } from '../../db/operators';
import type { Pool } from '../../db/pool';

const pt = catalogs['pt-BR'];

/** Operators of the back-office tests, all with the one password. */
export async function saveOperators(
  pool: Pool,
  password: string,
  operators: readonly Omit<NewOperator, 'passwordHash'>[],
): Promise<void> {
  const passwordHash = await hashPassword(password);
  for (const o of operators) await saveOperator(pool, { ...o, passwordHash });
}

/**
 * A page of its own (its own cookies, in pt-BR at 1200×900) signed in as `email` through the
 * sign-in form `path` answers with; answers once the form is sent.
 */
export async function signedInAt(
  browser: Browser,
  url: string,
  path: string,
  email: string,
  password: string,
): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 }, locale: 'pt-BR' });
  const page = await context.newPage();
  await page.goto(`${url}${path}`);
  await page.getByLabel(pt.signIn.email).fill(email);
  await page.getByLabel(pt.signIn.password).fill(password);
  await page.getByRole('button', { name: pt.signIn.submit }).click();
  return page;
}

/** The CSRF token of a back-office form's page. */
export const tokenIn = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)?.[1] ?? '';
/** The session cookie a response sets, as a `cookie` header's value. */
export const cookieOf = (res: Response) => res.headers.getSetCookie()[0]?.split(';')[0] ?? '';

/** Signs in through the sign-in form over HTTP; answers the session cookie. */
export async function sessionCookie(url: string, email: string, password: string): Promise<string> {
  const form = await fetch(`${url}/backoffice/sign-in`);
  const res = await fetch(`${url}/backoffice/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { cookie: cookieOf(form), 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ _csrf: tokenIn(await form.text()), email, password }),
  });
  if (res.status !== 303) throw new Error(`sign-in as ${email} answered ${res.status}, not 303`);
  return cookieOf(res);
}
