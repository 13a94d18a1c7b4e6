import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { parseDepositBody } from '../../api/deposits-schemas';
import { canonicalJson } from '../../common/canonical-json';
import { formatBrl } from '../../common/money';
import { txidSchema } from '../../contracts/flow-input';
import { Problem } from '../../http/problem';
import { parse } from '../../http/request-input';
import { newTxid } from '../../starters/deposit';
import { requestHash } from '../../starters/start-or-attach';

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

describe("a deposit's payer bank account", () => {
  const payer = { externalId: 'user-1', cpf: '63401825771', email: 'ana@example.com', name: 'Ana Souza' };
  const body = (client: Record<string, unknown>) => ({
    amountCentavos: 15_000,
    client: { ...payer, ...client },
  });
  /** The problem a body is refused with (none: undefined). */
  const refusal = (value: unknown, where: 'body' | 'input' = 'body') => {
    try {
      parseDepositBody(where, value);
    } catch (err) {
      expect(err).toBeInstanceOf(Problem);
      const p = err as Problem;
      expect([p.status, p.slug]).toEqual([400, 'validation-error']);
      return { detail: p.detail, params: p.extra.invalid_params };
    }
    return undefined;
  };

  it('takes client.bankAccount as ispb, branch and number, digits only', () => {
    const bankAccount = { ispb: '60701190', branch: '0001', number: '09876543' };
    expect(parseDepositBody('body', body({ bankAccount })).client.bankAccount).toEqual(bankAccount);
    expect(parseDepositBody('body', body({})).client.bankAccount).toBeUndefined();
  });

  it('refuses a bad ispb, branch or number with 400 naming the field', () => {
    const good = { ispb: '60701190', branch: '1', number: '1' };
    const cases: [Record<string, unknown>, string, string][] = [
      [{ ...good, ispb: '6070119' }, 'ispb', 'must be 8 digits'],
      [{ ...good, ispb: '6070119A' }, 'ispb', 'must be 8 digits'],
      [{ ...good, branch: '123456' }, 'branch', 'must be 1 to 5 digits'],
      [{ ...good, branch: '' }, 'branch', 'must be 1 to 5 digits'],
      [{ ...good, number: '0987654-3' }, 'number', 'must be 1 to 20 digits, check digit included, no hyphen'],
      [
        { ...good, number: '1'.repeat(21) },
        'number',
        'must be 1 to 20 digits, check digit included, no hyphen',
      ],
    ];
    for (const [bankAccount, field, reason] of cases) {
      const name = `body.client.bankAccount.${field}`;
      expect(refusal(body({ bankAccount }))).toEqual({
        detail: `${name}: ${reason}`,
        params: [{ name, reason }],
      });
    }
    const { number: _, ...noNumber } = good;
    expect(refusal(body({ bankAccount: noNumber }))?.params).toEqual([
      { name: 'body.client.bankAccount.number', reason: expect.any(String) },
    ]);
    // A Nexus operation's input names it from `input`.
    expect(refusal(body({ bankAccount: { ...good, ispb: '1' } }), 'input')?.params).toEqual([
      { name: 'input.client.bankAccount.ispb', reason: 'must be 8 digits' },
    ]);
  });

  it('refuses the old bankispb, bankbranch and bankaccount with 400 saying where each went', () => {
    const old = { bankispb: '60701190', bankbranch: '0001', bankaccount: '0987654-3' };
    expect(refusal(body(old))).toEqual({
      detail: 'body.client.bankispb: renamed to client.bankAccount.ispb',
      params: [
        { name: 'body.client.bankispb', reason: 'renamed to client.bankAccount.ispb' },
        { name: 'body.client.bankbranch', reason: 'renamed to client.bankAccount.branch' },
        { name: 'body.client.bankaccount', reason: 'renamed to client.bankAccount.number' },
      ],
    });
    // One is enough, with the new field beside it too; the body's other errors come after.
    expect(
      refusal(
        body({ bankaccount: '1', bankAccount: { ispb: '60701190', branch: '1', number: '1' } }),
        'input',
      )?.params,
    ).toEqual([{ name: 'input.client.bankaccount', reason: 'renamed to client.bankAccount.number' }]);
    expect(refusal({ ...body({ bankispb: '60701190' }), amountCentavos: 0 })?.params).toEqual([
      { name: 'body.client.bankispb', reason: 'renamed to client.bankAccount.ispb' },
      { name: 'body.amountCentavos', reason: 'must be at least 1 centavo' },
    ]);
  });

  it('still drops other properties it does not know', () => {
    const parsed = parseDepositBody('body', { ...body({ nickname: 'Aninha' }), channel: 'app' });
    expect(parsed).toEqual({ amountCentavos: 15_000, client: payer });
  });
});
