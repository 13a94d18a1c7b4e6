import { ApplicationFailure } from '@temporalio/activity';
import { isProviderError, RateLimitedError } from '../connectors/errors';

// Provider business errors (4xx) can never succeed on retry: they become non-retryable failures
// whose type is the provider error code, so workflows can branch on it. 401, 429, 5xx, timeouts
// and connection errors stay retryable; a 429 waits as long as Retry-After asks.
function asActivityFailure(err: unknown): unknown {
  if (err instanceof RateLimitedError && err.retryAfterMs !== undefined) {
    return ApplicationFailure.create({
      message: err.message,
      type: err.code,
      nextRetryDelay: err.retryAfterMs,
    });
  }
  if (isProviderError(err) && !err.retryable) {
    return ApplicationFailure.nonRetryable(err.message, err.code);
  }
  return err;
}

export async function providerCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw asActivityFailure(err);
  }
}
