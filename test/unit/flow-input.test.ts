import { generate as generateCpf } from '@fnando/cpf';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { depositInputSchema } from '../../contracts/deposit-input';
import { birthdaySchema, cpfSchema } from '../../contracts/flow-input';
import { Problem } from '../../http/problem';
import { parse } from '../../http/request-input';

const issuesOf = (
  schema: { safeParse(v: unknown): { error?: { issues: { message: string }[] } } },
  v: unknown,
) => schema.safeParse(v).error?.issues.map((i) => i.message) ?? [];

describe('cpfSchema', () => {
  it('gives one error per field: the shape first, the check digits only for 11 digits', () => {
    expect(issuesOf(cpfSchema, '123')).toEqual(['must be 11 digits']);
    expect(issuesOf(cpfSchema, '529.982.247-25')).toEqual(['must be 11 digits']);
    expect(issuesOf(cpfSchema, '52998224724')).toEqual(['has invalid check digits']);
    expect(issuesOf(cpfSchema, '11111111111')).toEqual(['has invalid check digits']);
    expect(issuesOf(cpfSchema, '52998224725')).toEqual([]);
  });

  it('answers one invalid_params entry for a short CPF in a request', () => {
    const body = {
      txid: '1',
      merchant: 'm',
      client: { externalId: 'x', cpf: '123', email: 'ana@example.com', name: 'Ana' },
      amountCentavos: 100,
    };
    let problem: unknown;
    try {
      parse(depositInputSchema, 'body', body);
    } catch (err) {
      problem = err;
    }
    expect(problem).toBeInstanceOf(Problem);
    expect((problem as Problem).extra.invalid_params).toEqual([
      { name: 'body.client.cpf', reason: 'must be 11 digits' },
    ]);
  });

  it('accepts every valid CPF and its published examples', () => {
    const meta = cpfSchema.meta() as { format?: string; examples?: string[] };
    expect(meta.format).toBe('cpf');
    expect(meta.examples?.length).toBeGreaterThan(0);
    for (const ex of meta.examples ?? []) expect(cpfSchema.safeParse(ex).success).toBe(true);
    fc.assert(
      fc.property(fc.integer(), () => cpfSchema.safeParse(generateCpf()).success),
      { numRuns: 200 },
    );
  });
});

describe('birthdaySchema', () => {
  const today = new Date();
  const iso = (d: Date) => d.toISOString().slice(0, 10);

  it('refuses what only looks like a date, with one error', () => {
    for (const v of ['0000-00-00', '1990-13-01', '1990-02-30', '2023-02-29', '1990-1-2', '19900102']) {
      expect(issuesOf(birthdaySchema, v), v).toEqual(['must be a real date YYYY-MM-DD']);
    }
  });

  it('refuses dates before 1900 and in the future', () => {
    const tomorrow = new Date(today.getTime() + 86_400_000);
    for (const v of ['0001-01-01', '1899-12-31', iso(tomorrow), '9999-12-31']) {
      expect(issuesOf(birthdaySchema, v), v).toEqual(['must be between 1900-01-01 and today']);
    }
  });

  it('accepts real dates from 1900 to today', () => {
    for (const v of ['1900-01-01', '1990-01-02', '2000-02-29', '2024-02-29', iso(today)]) {
      expect(birthdaySchema.safeParse(v).success, v).toBe(true);
    }
  });
});
