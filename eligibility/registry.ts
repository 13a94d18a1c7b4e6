import { postSignedJson, type SignedPostOptions, signedJsonRequest } from '../signed-requests/client';
import {
  type EligibilityAnswer,
  type EligibilityPurpose,
  type EligibilityRequest,
  eligibilityAnswerSchema,
} from './contract';

// The seam to the registry of impeded people: pixflow asks through EligibilityRegistry, and the
// one implementation here asks the operator's eligibility service over HTTP (docs/rules.md, Eligibility).

export interface EligibilityRegistry {
  check(cpf: string, purpose: EligibilityPurpose): Promise<EligibilityAnswer>;
}

/** The registry gave no usable answer (unreachable, too slow, an error, an answer off contract). */
export class EligibilityUnavailableError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EligibilityUnavailableError';
  }
}

export type HttpRegistryOptions = SignedPostOptions;

const ELIGIBILITY_SENDER = { idPrefix: 'elig', userAgent: 'pixflow-eligibility/1' };

/** The signed POST of one eligibility attempt. */
export function signedEligibilityRequest(body: string, secret: string, now = new Date()) {
  return signedJsonRequest(body, secret, ELIGIBILITY_SENDER, now);
}

export function httpEligibilityRegistry(o: HttpRegistryOptions): EligibilityRegistry {
  return {
    async check(cpf, purpose) {
      const request: EligibilityRequest = { cpf, purpose, requestedAt: new Date().toISOString() };
      try {
        return await postSignedJson(o, ELIGIBILITY_SENDER, eligibilityAnswerSchema, request);
      } catch (err) {
        // Never the CPF: the message says what went wrong, not about whom.
        throw new EligibilityUnavailableError(`the eligibility registry ${(err as Error).message}`);
      }
    },
  };
}
