import { configure } from 'safe-stable-stringify';

/**
 * Canonical JSON: keys sorted at every level and undefined members left out, so equal requests
 * compare (and hash) equal whatever their key order. Pure: the workflows use it too.
 */
export const canonicalJson = configure({ deterministic: true, circularValue: Error }) as (
  v: unknown,
) => string;
