import { describe, expect, it } from 'vitest';
import { TokenCache } from '../../connectors/identity-payments/token-cache';

function fakeIssuer(expiresInSeconds = 3600) {
  let n = 0;
  return {
    get issued() {
      return n;
    },
    fetchToken: async () => {
      n += 1;
      await new Promise((r) => setTimeout(r, 5));
      return { accessToken: `t${n}`, expiresInSeconds };
    },
  };
}

describe('TokenCache', () => {
  it('shares one in-flight request between concurrent callers', async () => {
    const issuer = fakeIssuer();
    const cache = new TokenCache({ fetchToken: issuer.fetchToken });
    const tokens = await Promise.all(Array.from({ length: 50 }, () => cache.get()));
    expect(new Set(tokens)).toEqual(new Set(['t1']));
    expect(cache.tokenRequests).toBe(1);
    expect(issuer.issued).toBe(1);
  });

  it('reuses the token until expiry minus the safety margin, then refreshes', async () => {
    let now = 1_000_000;
    const issuer = fakeIssuer(3600);
    const cache = new TokenCache({ fetchToken: issuer.fetchToken, now: () => now, safetyMarginMs: 60_000 });
    expect(await cache.get()).toBe('t1');
    now += 3600_000 - 60_001;
    expect(await cache.get()).toBe('t1');
    now += 2;
    expect(await cache.get()).toBe('t2');
    expect(cache.tokenRequests).toBe(2);
  });

  it('invalidates only the refused token', async () => {
    const issuer = fakeIssuer();
    const cache = new TokenCache({ fetchToken: issuer.fetchToken });
    const first = await cache.get();
    cache.invalidate(first);
    const second = await cache.get();
    expect(second).toBe('t2');
    cache.invalidate(first); // a late 401 for the old token must not drop the new one
    expect(await cache.get()).toBe('t2');
    expect(cache.tokenRequests).toBe(2);
  });

  it('does not cache a failed request', async () => {
    let fail = true;
    const cache = new TokenCache({
      fetchToken: async () => {
        if (fail) throw new Error('down');
        return { accessToken: 'ok', expiresInSeconds: 3600 };
      },
    });
    await expect(cache.get()).rejects.toThrow('down');
    fail = false;
    expect(await cache.get()).toBe('ok');
  });
});
