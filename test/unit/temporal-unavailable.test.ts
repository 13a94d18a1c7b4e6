import { ServiceError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { isTemporalUnavailable } from '../../http/problem';

// The gRPC statuses a Temporal call can end with, as the SDK wraps them: which ones mean "not now"
// (a 503 with Retry-After, a Nexus UNAVAILABLE) and which an internal error.

/** What the client throws for a failed call: a ServiceError caused by grpc-js's status error. */
function grpcFailure(code: number, details: string): ServiceError {
  return new ServiceError('Failed to query Workflow', {
    cause: Object.assign(new Error(`${code} ${details}`), { code, details }),
  });
}

describe('isTemporalUnavailable', () => {
  it('is true for a server away or a call past its deadline', () => {
    expect(isTemporalUnavailable(grpcFailure(14, 'No connection established'))).toBe(true);
    expect(isTemporalUnavailable(grpcFailure(4, 'Deadline exceeded'))).toBe(true);
  });

  it('is true for a call the server reset at its deadline (grpc-js says CANCELLED)', () => {
    // Seen under overload: a query held past the request's deadline ends this way as often as
    // with DEADLINE_EXCEEDED, whichever side's timer fires first.
    expect(isTemporalUnavailable(grpcFailure(1, 'Call cancelled'))).toBe(true);
  });

  it('is true for a query no worker polls for, and only that precondition', () => {
    expect(isTemporalUnavailable(grpcFailure(9, 'no poller seen for task queue recently'))).toBe(true);
    expect(isTemporalUnavailable(grpcFailure(9, 'workflow execution already completed'))).toBe(false);
  });

  it('is false for what the caller or the code got wrong', () => {
    expect(isTemporalUnavailable(grpcFailure(3, 'invalid argument'))).toBe(false);
    expect(isTemporalUnavailable(grpcFailure(13, 'internal'))).toBe(false);
    expect(isTemporalUnavailable(new Error('not a Temporal call'))).toBe(false);
    expect(isTemporalUnavailable(undefined)).toBe(false);
  });
});
