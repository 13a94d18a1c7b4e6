// OAuth token cache: one token reused until shortly before it expires, one in-flight request shared
// by every concurrent caller, and invalidation of exactly the token that was refused (so a burst of
// 401s on the same token causes a single refresh).

export interface IssuedToken {
  accessToken: string;
  expiresInSeconds: number;
}

export interface TokenCacheOptions {
  fetchToken: () => Promise<IssuedToken>;
  now?: () => number;
  /** Refresh this long before expiry. Default 60 s. */
  safetyMarginMs?: number;
}

export class TokenCache {
  private readonly fetchToken: () => Promise<IssuedToken>;
  private readonly now: () => number;
  private readonly safetyMarginMs: number;
  private current: { token: string; refreshAt: number } | undefined;
  private inFlight: Promise<string> | undefined;
  private requests = 0;

  constructor(options: TokenCacheOptions) {
    this.fetchToken = options.fetchToken;
    this.now = options.now ?? Date.now;
    this.safetyMarginMs = options.safetyMarginMs ?? 60_000;
  }

  /** Token requests issued so far (for metrics and tests). */
  get tokenRequests(): number {
    return this.requests;
  }

  async get(): Promise<string> {
    if (this.current && this.now() < this.current.refreshAt) return this.current.token;
    if (!this.inFlight) {
      this.requests += 1;
      const started = this.now();
      this.inFlight = this.fetchToken()
        .then(({ accessToken, expiresInSeconds }) => {
          const lifetimeMs = expiresInSeconds * 1000;
          // A margin larger than the lifetime would never cache; then refresh at half-life instead.
          const usable =
            lifetimeMs > this.safetyMarginMs * 2 ? lifetimeMs - this.safetyMarginMs : lifetimeMs / 2;
          this.current = { token: accessToken, refreshAt: started + usable };
          return accessToken;
        })
        .finally(() => {
          this.inFlight = undefined;
        });
    }
    return this.inFlight;
  }

  /** Forget `token` if it is still the cached one (a 401 proved it dead). */
  invalidate(token?: string): void {
    if (this.current && (token === undefined || this.current.token === token)) this.current = undefined;
  }
}
