// Typed provider errors. `retryable` tells activities whether trying again can help:
// business 4xx never, 401/429/5xx/timeouts/connection errors yes.

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

export class InvalidDocumentError extends ProviderError {
  readonly code = 'INVALID_DOCUMENT';
  readonly retryable = false;
}
export class RestrictedDocumentError extends ProviderError {
  readonly code = 'RESTRICT_DOCUMENT';
  readonly retryable = false;
}
export class DocumentNotFoundError extends ProviderError {
  readonly code = 'DOCUMENT_NOT_FOUND';
  readonly retryable = false;
}
export class DeceasedOrUnderAgeError extends ProviderError {
  readonly code = 'DECEASED_OR_UNDER_AGE';
  readonly retryable = false;
}
export class NotFoundError extends ProviderError {
  readonly code = 'NOT_FOUND';
  readonly retryable = false;
}
export class UnauthorizedError extends ProviderError {
  readonly code = 'UNAUTHORIZED';
  readonly retryable = true;
}
export class RateLimitedError extends ProviderError {
  readonly code = 'RATE_LIMITED';
  readonly retryable = true;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, details: ProviderErrorDetails & { retryAfterMs?: number } = {}) {
    super(message, details);
    this.retryAfterMs = details.retryAfterMs;
  }
}
/** 5xx, timeouts and connection errors. The request may or may not have acted. */
export class ProviderUnavailableError extends ProviderError {
  readonly code = 'PROVIDER_UNAVAILABLE';
  readonly retryable = true;
}
/** A repeated withdrawal transactionId, or a deposit txid reused with a different body (HTTP 409). */
export class DuplicateTransactionError extends ProviderError {
  readonly code = 'DUPLICATE_TRANSACTION';
  readonly retryable = false;
}
/** A response that does not have what we need; `path` names the field. */
export class ContractError extends ProviderError {
  readonly code = 'CONTRACT_VIOLATION';
  readonly retryable = false;
  readonly path: string;
  constructor(message: string, details: ProviderErrorDetails & { path: string }) {
    super(message, details);
    this.path = details.path;
  }
}
export class BadRequestError extends ProviderError {
  readonly code = 'BAD_REQUEST';
  readonly retryable = false;
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
