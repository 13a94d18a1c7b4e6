import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiEnv, startApiEnv } from '../api/support';

// Outside loopback the back office's cookie is Secure: behind a proxy that ends TLS (trusted by
// TRUST_PROXY) it is set with the Secure flag; over plain http it is not set at all, so a session
// never travels in the clear.

let e: ApiEnv;
beforeAll(async () => {
  e = await startApiEnv({}, { env: { BACKOFFICE_SECURE_COOKIE: 'true', TRUST_PROXY: 'loopback' } });
}, 120_000);
afterAll(() => e?.close());

const signInPage = (headers: Record<string, string> = {}) =>
  fetch(`${e.url}/backoffice/sign-in`, { headers });

describe('the back office session cookie outside loopback', () => {
  it('is Secure, HttpOnly and SameSite=Strict when the proxy says the request came over https', async () => {
    const res = await signInPage({ 'x-forwarded-proto': 'https' });
    expect(res.status).toBe(200);
    const cookie = res.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/^pixflow_bo=/);
    expect(cookie).toMatch(/; Secure/);
    expect(cookie).toMatch(/; HttpOnly/);
    expect(cookie).toMatch(/; SameSite=Strict/);
    expect(cookie).toMatch(/; Path=\/backoffice/);
  });

  it('is not sent at all over plain http', async () => {
    const res = await signInPage();
    expect(res.status).toBe(200);
    expect(res.headers.get('set-cookie')).toBeNull();
  });

  it('its pages allow only their own forms and scripts, and are never cached', async () => {
    const res = await signInPage({ 'x-forwarded-proto': 'https' });
    expect(res.headers.get('content-security-policy')).toContain("form-action 'self'");
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(res.headers.get('cache-control')).toBe('no-store');
  });
});
