import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { newTxid } from '../../api/deposits';
import { requestHash } from '../../api/start-flow';
import { canonicalJson } from '../../common/canonical-json';
import { formatBrl } from '../../common/money';
import { txidSchema } from '../../contracts/flow-input';
import { Problem } from '../../http/problem';
import { parse } from '../../http/request-input';

describe('what the routes share', () => {
  it('formats centavos as BRL by integer string arithmetic', () => {
    expect(formatBrl(15_000)).toBe('R$ 150,00');
    expect(formatBrl(5)).toBe('R$ 0,05');
    expect(formatBrl(123_456_789)).toBe('R$ 1.234.567,89');
    expect(formatBrl(100_000_000_00)).toBe('R$ 100.000.000,00');
  });

  it('hashes requests canonically: key order does not matter, values do', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: 'x' } })).toBe('{"a":{"c":"x","d":[1,2]},"b":1}');
    const key = 'k'.repeat(16);
    expect(requestHash({ a: 1, b: 2 }, key)).toBe(requestHash({ b: 2, a: 1 }, key));
    expect(requestHash({ a: 1, b: 2 }, key)).not.toBe(requestHash({ a: 1, b: 3 }, key));
  });

  it('generates valid, distinct txids', () => {
    const a = newTxid();
    expect(txidSchema.safeParse(a).success).toBe(true);
    expect(a).toHaveLength(32);
    expect(newTxid()).not.toBe(a);
  });
});

describe('parse', () => {
  const schema = z.object({ name: z.string().min(1) });

  it('refuses NUL or a lone surrogate in a field the schema keeps, naming it', () => {
    for (const name of ['a\u0000b', 'a\ud800b']) {
      let problem: unknown;
      try {
        parse(schema, 'body', { name });
      } catch (err) {
        problem = err;
      }
      expect(problem).toBeInstanceOf(Problem);
      expect((problem as Problem).extra.invalid_params).toEqual([
        { name: 'body.name', reason: 'must be well-formed text without NUL characters' },
      ]);
    }
  });

  it('drops unknown properties unread, whatever text they hold (the document allows them)', () => {
    expect(parse(schema, 'body', { name: 'Ana', extra: 'a\u0000b', more: ['\ud800'] })).toEqual({
      name: 'Ana',
    });
  });
});
