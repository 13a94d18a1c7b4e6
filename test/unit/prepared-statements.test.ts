import { describe, expect, it } from 'vitest';
import { prepared } from '../../db/pool';

describe('a prepared statement', () => {
  it('runs by its name with the values given', () => {
    const byId = prepared('unit-by-id', 'SELECT 1 WHERE $1::int > 0');
    expect(byId([7])).toEqual({
      name: 'pixflow-unit-by-id',
      text: 'SELECT 1 WHERE $1::int > 0',
      values: [7],
    });
  });

  it('refuses a second text under a name already given (Postgres would run the first)', () => {
    prepared('unit-twice', 'SELECT 1');
    expect(() => prepared('unit-twice', 'SELECT 1')).not.toThrow();
    expect(() => prepared('unit-twice', 'SELECT 2')).toThrow(/two statements prepared as "unit-twice"/);
  });
});
