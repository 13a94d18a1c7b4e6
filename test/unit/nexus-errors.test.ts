import type { ApplicationFailure } from '@temporalio/common';
import { HandlerError, OperationError } from 'nexus-rpc';
import { describe, expect, it } from 'vitest';
import { Problem } from '../../http/problem';
import { nexusError, refusalError } from '../../nexus/errors';

// What a Nexus caller's workflow sees of a start path's failure: its own mistake fails the
// operation, a dependency away is asked again, and a database's words never cross.

describe('nexusError', () => {
  it("fails the caller's bad input for good", () => {
    const e = nexusError(new Problem(400, 'invalid-request', 'Invalid request', 'amountCentavos: too small'));
    expect(e).toBeInstanceOf(HandlerError);
    expect((e as HandlerError).type).toBe('BAD_REQUEST');
  });

  it('fails the operation for good on a refusal of the rules, with the type and details the API answers', () => {
    const e = refusalError(
      { outcome: 'refused', workflowId: 'deposit-1', reason: 'closed', policyVersion: 3, details: {} },
      { type: 'customer-closed', title: "The person's account is closed", detail: 'no deposit', fields: {} },
    );
    expect(e).toBeInstanceOf(OperationError);
    expect(e.state).toBe('failed');
    const cause = e.cause as ApplicationFailure;
    expect(cause.type).toBe('customer-closed');
    expect(cause.nonRetryable).toBe(true);
    expect(cause.details?.[0]).toMatchObject({ reason: 'closed', policyVersion: 3, workflowId: 'deposit-1' });
    expect(nexusError(e)).toBe(e);
  });

  it('fails the operation for good on a 409 the API answers with its own type (a brand without the account the flow needs)', () => {
    const e = nexusError(
      new Problem(409, 'brand-without-account', 'The brand has no account for this', 'x', { brand: 'b' }),
    );
    expect(e).toBeInstanceOf(OperationError);
    const cause = (e as OperationError).cause as ApplicationFailure;
    expect(cause.type).toBe('brand-without-account');
    expect(cause.nonRetryable).toBe(true);
    expect(cause.details?.[0]).toMatchObject({ brand: 'b' });
  });

  it('asks again, without its words, when the database is restarting', () => {
    const pgDown = Object.assign(new Error('the database system is not yet accepting connections'), {
      code: '57P03',
    });
    const e = nexusError(pgDown);
    expect(e).toBeInstanceOf(HandlerError);
    expect((e as HandlerError).type).toBe('UNAVAILABLE');
    expect((e as HandlerError).message).not.toContain('accepting connections');
    expect((e as HandlerError).cause).toBeUndefined();
  });

  it('leaves a query of its own failing as it is', () => {
    const constraint = Object.assign(new Error('duplicate key value violates unique constraint'), {
      code: '23505',
    });
    expect(nexusError(constraint)).toBe(constraint);
  });
});
