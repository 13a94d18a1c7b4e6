import { describe, expect, it } from 'vitest';
import {
  brandIdSchema,
  brandPatchSchema,
  cnpjSchema,
  formatCnpj,
  isValidCnpj,
  newBrandSchema,
} from '../../contracts/brand';

// A brand's operator is named by its CNPJ: 12 letters or digits (alphanumeric since July 2026)
// and 2 mod-11 check digits, taken with or without punctuation and kept bare.

/** The first message zod gives for `value`, or undefined when it is taken. */
const problem = (value: unknown) => {
  const r = cnpjSchema.safeParse(value);
  return r.success ? undefined : r.error.issues.map((i) => i.message);
};

describe('a CNPJ', () => {
  it('takes a valid one, bare or punctuated, and keeps its digits', () => {
    expect(cnpjSchema.parse('11222333000181')).toBe('11222333000181');
    expect(cnpjSchema.parse('11.222.333/0001-81')).toBe('11222333000181');
    expect(cnpjSchema.parse(' 11.444.777/0001-61 ')).toBe('11444777000161');
    // A remainder below 2 gives the check digit 0.
    expect(cnpjSchema.parse('00.000.000/0001-91')).toBe('00000000000191');
  });

  it('takes an alphanumeric one (IN RFB 2.229/2024), letters counted as their code minus 48', () => {
    // The Receita Federal's own example.
    expect(cnpjSchema.parse('12.ABC.345/01DE-35')).toBe('12ABC34501DE35');
    expect(cnpjSchema.parse('12abc34501de35')).toBe('12ABC34501DE35');
    expect(problem('12.ABC.345/01DE-36')).toEqual(['has invalid check digits']);
    expect(formatCnpj('12ABC34501DE35')).toBe('12.ABC.345/01DE-35');
  });

  it('refuses a wrong check digit, either of the two', () => {
    expect(problem('11222333000182')).toEqual(['has invalid check digits']);
    expect(problem('11.222.333/0001-71')).toEqual(['has invalid check digits']);
    expect(isValidCnpj('11222333000191')).toBe(false);
  });

  it('refuses one digit repeated, though its arithmetic holds', () => {
    for (const d of '0123456789') {
      expect(isValidCnpj(d.repeat(14))).toBe(false);
      expect(problem(d.repeat(14))).toEqual(['is one digit repeated: no CNPJ']);
    }
  });

  it('refuses what is not 14 characters of its shape with one error, not also its check digits', () => {
    for (const bad of ['1122233300018', '112223330001811', '11.222.333/0001-8A', 'abc', '', '11_222']) {
      expect(problem(bad), bad).toEqual([
        'must be 14 characters (12 letters or digits, then 2 check digits), with or without . / and -',
      ]);
    }
    expect(problem(11222333000181)).toHaveLength(1);
  });

  it('is shown as the Receita Federal prints it', () => {
    expect(formatCnpj('11222333000181')).toBe('11.222.333/0001-81');
    expect(formatCnpj('11.222.333/0001-81')).toBe('11.222.333/0001-81');
    expect(formatCnpj('123')).toBe('123');
  });
});

describe('a brand', () => {
  it('has a slug for an id', () => {
    for (const ok of ['default', 'bet-rio', 'b2', `a${'b'.repeat(39)}`])
      expect(brandIdSchema.parse(ok)).toBe(ok);
    for (const bad of ['a', 'Bet', '2bet', 'bet_rio', 'bet rio', `a${'b'.repeat(40)}`, '-bet']) {
      expect(brandIdSchema.safeParse(bad).success, bad).toBe(false);
    }
  });

  it('is created with a name, the operator fields coming later', () => {
    expect(newBrandSchema.parse({ id: 'bet-rio', name: ' Bet Rio ' })).toEqual({
      id: 'bet-rio',
      name: 'Bet Rio',
    });
    const full = newBrandSchema.parse({
      id: 'bet-rio',
      name: 'Bet Rio',
      legalName: 'Rio Apostas Ltda.',
      cnpj: '11.222.333/0001-81',
      authorization: 'Portaria SPA/MF nº 1.234/2024',
    });
    expect(full.cnpj).toBe('11222333000181');
    const noName = newBrandSchema.safeParse({ id: 'bet-rio' });
    expect(noName.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([['name', 'is required']]);
    const empty = newBrandSchema.safeParse({ id: 'bet-rio', name: 'x', legalName: '  ' });
    expect(empty.error?.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['legalName', 'must not be empty'],
    ]);
  });

  it('is updated by naming at least one field', () => {
    expect(brandPatchSchema.parse({ cnpj: '11222333000181' })).toEqual({ cnpj: '11222333000181' });
    expect(brandPatchSchema.safeParse({}).error?.issues[0]?.message).toContain('name at least one field');
  });
});
