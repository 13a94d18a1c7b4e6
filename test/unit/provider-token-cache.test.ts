import { describe, expect, it } from 'vitest';
import { TokenCache } from '../../connectors/token-cache';

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

describe('TokenCache guards against token requests per retry', () => {
  it('replaces a refused token once, and keeps a replacement nothing has taken yet', async () => {
    const issuer = fakeIssuer();
    const cache = new TokenCache({ fetchToken: issuer.fetchToken });
    const first = await cache.get();
    cache.accepted(first);
    expect(cache.refused(first)).toBe(true);
    const second = await cache.get();
    expect(second).toBe('t2');
    // Refused before anything took it: a new token would be refused too.
    expect(cache.refused(second)).toBe(false);
    expect(await cache.get()).toBe('t2');
    expect(cache.refused(second)).toBe(false);
    expect(cache.tokenRequests).toBe(2);
    // Once taken, a later refusal may mean it died: one more replacement.
    cache.accepted(second);
    expect(cache.refused(second)).toBe(true);
    expect(await cache.get()).toBe('t3');
    expect(cache.tokenRequests).toBe(3);
  });

  it('replaces an untaken replacement refused again once it is older than the keep window', async () => {
    // A replacement revoked before anything took it: kept for the window, not until it expires.
    let now = 1_000_000;
    const issuer = fakeIssuer(3600);
    const cache = new TokenCache({
      fetchToken: issuer.fetchToken,
      now: () => now,
      keepUntakenReplacementMs: 30_000,
    });
    const first = await cache.get();
    cache.accepted(first);
    expect(cache.refused(first)).toBe(true);
    const second = await cache.get();
    now += 29_999;
    expect(cache.refused(second)).toBe(false);
    expect(await cache.get()).toBe('t2');
    now += 1;
    expect(cache.refused(second)).toBe(true);
    expect(await cache.get()).toBe('t3');
    // The third is a replacement too: refused at once, it is kept again for the window.
    expect(cache.refused('t3')).toBe(false);
    expect(cache.tokenRequests).toBe(3);
  });

  it('a refusal of a token already replaced asks for the current one', async () => {
    const issuer = fakeIssuer();
    const cache = new TokenCache({ fetchToken: issuer.fetchToken });
    const first = await cache.get();
    expect(cache.refused(first)).toBe(true);
    expect(cache.refused(first)).toBe(true);
    expect(await cache.get()).toBe('t2');
    expect(cache.tokenRequests).toBe(2);
  });

  it("asks for no token during a rate limit's hold-off, then asks again", async () => {
    let now = 1_000_000;
    let limited = true;
    let asked = 0;
    const limit = new Error('rate limited');
    const cache = new TokenCache({
      now: () => now,
      holdOffMs: (err) => (err === limit ? 30_000 : undefined),
      fetchToken: async () => {
        asked += 1;
        if (limited) throw limit;
        return { accessToken: 'ok', expiresInSeconds: 3600 };
      },
    });
    await expect(cache.get()).rejects.toBe(limit);
    await expect(cache.get()).rejects.toBe(limit);
    expect(asked).toBe(1);
    limited = false;
    now += 29_999;
    await expect(cache.get()).rejects.toBe(limit);
    expect(asked).toBe(1);
    now += 1;
    expect(await cache.get()).toBe('ok');
    expect(asked).toBe(2);
  });
});
