// OAuth token cache, shared by every connector that takes client-credentials tokens: one token
// reused until shortly before it expires, one in-flight request shared by every concurrent
// caller, and replacement of exactly the token that was refused (so a burst of 401s on the same
// token causes a single refresh). Two guards keep token requests few, since providers rate-limit
// them: a token fresh from a replacement and refused before anything took it is not replaced
// again for a while (the refusal is likely about something else), and after a rate limit no token
// is asked for until its Retry-After has passed. The first guard is bounded in time: a replacement
// the provider revoked before anything took it (a credential rotation, a provider restart) would
// otherwise be kept, and every call refused, until it expired.

export interface IssuedToken {
  accessToken: string;
  expiresInSeconds: number;
}

export interface TokenCacheOptions {
  fetchToken: () => Promise<IssuedToken>;
  now?: () => number;
  /** Refresh this long before expiry. Default 60 s. */
  safetyMarginMs?: number;
  /** How long to ask for no token after `fetchToken` failed with `err` (a rate limit's Retry-After). */
  holdOffMs?: (err: unknown) => number | undefined;
  /**
   * How long a replacement nothing has taken yet is kept when refused; refused after that, it is
   * replaced. Bounds token requests to one per this long when refusals are about something else.
   * Default 30 s.
   */
  keepUntakenReplacementMs?: number;
}

interface CachedToken {
  token: string;
  refreshAt: number;
  /** When it was asked for. */
  fetchedAt: number;
  /** Fetched because the token before it was refused. */
  replacement: boolean;
  /** The provider took it at least once. */
  accepted: boolean;
}

export class TokenCache {
  private readonly fetchToken: () => Promise<IssuedToken>;
  private readonly now: () => number;
  private readonly safetyMarginMs: number;
  private readonly holdOffMs: (err: unknown) => number | undefined;
  private readonly keepUntakenReplacementMs: number;
  private current: CachedToken | undefined;
  private inFlight: Promise<string> | undefined;
  private replacing = false;
  private heldOff: { until: number; error: unknown } | undefined;
  private requests = 0;

  constructor(options: TokenCacheOptions) {
    this.fetchToken = options.fetchToken;
    this.now = options.now ?? Date.now;
    this.safetyMarginMs = options.safetyMarginMs ?? 60_000;
    this.holdOffMs = options.holdOffMs ?? (() => undefined);
    this.keepUntakenReplacementMs = options.keepUntakenReplacementMs ?? 30_000;
  }

  /** Token requests issued so far (for metrics and tests). */
  get tokenRequests(): number {
    return this.requests;
  }

  async get(): Promise<string> {
    if (this.current && this.now() < this.current.refreshAt) return this.current.token;
    if (this.inFlight) return this.inFlight;
    if (this.heldOff && this.now() < this.heldOff.until) throw this.heldOff.error;
    this.requests += 1;
    const started = this.now();
    const replacement = this.replacing;
    this.inFlight = this.fetchToken()
      .then(({ accessToken, expiresInSeconds }) => {
        const lifetimeMs = expiresInSeconds * 1000;
        // A margin larger than the lifetime would never cache; then refresh at half-life instead.
        const usable =
          lifetimeMs > this.safetyMarginMs * 2 ? lifetimeMs - this.safetyMarginMs : lifetimeMs / 2;
        this.current = {
          token: accessToken,
          refreshAt: started + usable,
          fetchedAt: started,
          replacement,
          accepted: false,
        };
        this.replacing = false;
        this.heldOff = undefined;
        return accessToken;
      })
      .catch((err: unknown) => {
        const ms = this.holdOffMs(err);
        if (ms !== undefined && ms > 0) this.heldOff = { until: this.now() + ms, error: err };
        throw err;
      })
      .finally(() => {
        this.inFlight = undefined;
      });
    return this.inFlight;
  }

  /** The provider took `token`: a later refusal of it may mean it died, and is worth a new one. */
  accepted(token: string): void {
    if (this.current?.token === token) this.current.accepted = true;
  }

  /**
   * The provider refused `token`. Forgets it and returns true when asking `get()` again may help;
   * returns false, keeping it, when it is itself a replacement nothing has taken yet, fetched less
   * than `keepUntakenReplacementMs` ago.
   */
  refused(token: string): boolean {
    if (!this.current || this.current.token !== token) return true;
    const { replacement, accepted, fetchedAt } = this.current;
    if (replacement && !accepted && this.now() - fetchedAt < this.keepUntakenReplacementMs) return false;
    this.current = undefined;
    this.replacing = true;
    return true;
  }

  /** Forget `token` if it is still the cached one (any token when none is given). */
  invalidate(token?: string): void {
    if (this.current && (token === undefined || this.current.token === token)) this.current = undefined;
  }
}
