// pixflow's error kinds for whatever a provider answers, the same for every connector. `retryable`
// tells activities whether trying again can help: business 4xx never; 401/429/5xx, timeouts,
// connection errors and answers no rule could read, yes.

export const providerErrorCodes = [
  'INVALID_DOCUMENT',
  'RESTRICT_DOCUMENT',
  'DOCUMENT_NOT_FOUND',
  'DECEASED_OR_UNDER_AGE',
  'NOT_FOUND',
  'UNAUTHORIZED',
  'RATE_LIMITED',
  'PROVIDER_UNAVAILABLE',
  'DUPLICATE_TRANSACTION',
  'CONTRACT_VIOLATION',
  'BAD_REQUEST',
  'UNCLASSIFIED',
] as const;
export type ProviderErrorCode = (typeof providerErrorCodes)[number];

export interface ProviderErrorDetails {
  status?: number;
  body?: unknown;
  endpoint?: string;
  cause?: unknown;
}

export abstract class ProviderError extends Error {
  abstract readonly code: ProviderErrorCode;
  abstract readonly retryable: boolean;
  readonly status: number | undefined;
  readonly body: unknown;
  readonly endpoint: string | undefined;

  constructor(message: string, details: ProviderErrorDetails = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.name = new.target.name;
    this.status = details.status;
    this.body = details.body;
    this.endpoint = details.endpoint;
  }
}

/**
 * The base of one kind of provider error: its code and whether trying again can help. Each kind
 * stays its own class, so callers tell them apart with `instanceof`.
 */
function providerErrorKind<C extends ProviderErrorCode>(code: C, retryable: boolean) {
  return class extends ProviderError {
    readonly code = code;
    readonly retryable = retryable;
  };
}

export class InvalidDocumentError extends providerErrorKind('INVALID_DOCUMENT', false) {}
export class RestrictedDocumentError extends providerErrorKind('RESTRICT_DOCUMENT', false) {}
export class DocumentNotFoundError extends providerErrorKind('DOCUMENT_NOT_FOUND', false) {}
export class DeceasedOrUnderAgeError extends providerErrorKind('DECEASED_OR_UNDER_AGE', false) {}
export class NotFoundError extends providerErrorKind('NOT_FOUND', false) {}
export class UnauthorizedError extends providerErrorKind('UNAUTHORIZED', true) {}
export class RateLimitedError extends providerErrorKind('RATE_LIMITED', true) {
  readonly retryAfterMs: number | undefined;
  constructor(message: string, details: ProviderErrorDetails & { retryAfterMs?: number } = {}) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
}
/** 5xx, timeouts and connection errors. The request may or may not have acted. */
export class ProviderUnavailableError extends providerErrorKind('PROVIDER_UNAVAILABLE', true) {}
/** A repeated withdrawal transactionId, or a deposit txid reused with a different body (HTTP 409). */
export class DuplicateTransactionError extends providerErrorKind('DUPLICATE_TRANSACTION', false) {}
/** A response that does not have what we need; `path` names the field. */
export class ContractError extends providerErrorKind('CONTRACT_VIOLATION', false) {
  readonly path: string;
  constructor(message: string, details: ProviderErrorDetails & { path: string }) {
    super(message, details);
    this.path = details.path;
  }
}
/**
 * The provider refused the request. `fields` names the request fields its validation message
 * mentions: a refusal of how pixflow asked, never a statement about the person or the payment.
 */
export class BadRequestError extends providerErrorKind('BAD_REQUEST', false) {
  readonly fields: readonly string[];
  constructor(message: string, details: ProviderErrorDetails & { fields?: readonly string[] } = {}) {
    super(message, details);
    this.fields = details.fields ?? [];
  }
}

/**
 * An answer no rule of the connector could read where a money or identity decision hangs on it
 * (a status word no table knows, a body of an unknown shape). Retryable: the flow keeps waiting
 * and asking, and an operator is told (the metric, the alert, the log line name `op` and `field`).
 */
export class UnclassifiedAnswerError extends providerErrorKind('UNCLASSIFIED', true) {
  readonly op: string;
  readonly field: string;
  constructor(message: string, details: ProviderErrorDetails & { op: string; field: string }) {
    super(message, details);
    this.op = details.op;
    this.field = details.field;
  }
}

export function isProviderError(err: unknown): err is ProviderError {
  return err instanceof ProviderError;
}

/** Parses a Retry-After header (delta-seconds or HTTP date) into milliseconds. */
export function parseRetryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}
