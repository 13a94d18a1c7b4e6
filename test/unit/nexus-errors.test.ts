import { HandlerError, OperationError } from 'nexus-rpc';
import { describe, expect, it } from 'vitest';
import { Problem } from '../../http/problem';
import { nexusError } from '../../nexus/errors';

// What a Nexus caller's workflow sees of a start path's failure: its own mistake fails the
// operation, a dependency away is asked again, and a database's words never cross.

describe('nexusError', () => {
  it("fails the caller's bad input for good", () => {
    const e = nexusError(new Problem(400, 'invalid-request', 'Invalid request', 'amountCentavos: too small'));
    expect(e).toBeInstanceOf(HandlerError);
    expect((e as HandlerError).type).toBe('BAD_REQUEST');
    expect(nexusError(new Problem(409, 'conflict', 'Conflict'))).toBeInstanceOf(OperationError);
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
