import type { IssuedLivenessLink } from '../activities/onboarding';
import type { LivenessLink } from '../contracts/onboarding';

/** The link the provider issued, as a flow keeps and hands it out: valid `ttlMs` from `issuedAt`. */
export function keptLink(issued: IssuedLivenessLink, issuedAt: number, ttlMs: number): LivenessLink {
  return {
    url: issued.url,
    qrcode: issued.qrcode,
    type: issued.type,
    issuedAt: new Date(issuedAt).toISOString(),
    expiresAt: new Date(issuedAt + ttlMs).toISOString(),
  };
}
