// The token cache is shared by every connector (../token-cache.ts); this path is kept for the
// code and tests that import it from here.
export * from '../token-cache';
