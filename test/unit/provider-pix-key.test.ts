import { describe, expect, it } from 'vitest';
import { detectPixType, parseCompositeAccountKey, pixKeyProblem } from '../../contracts/pix-key';

describe('pixKeyProblem', () => {
  it.each([
    ['63401825771', 'CPF'],
    ['ana.costa+pix@example.com.br', 'EMAIL'],
    ['+5511987654321', 'PHONE'],
    ['+551133334444', 'PHONE'],
    ['7d9f0335-8dcc-4054-9bf9-0dbd61d36906', 'EVP'],
    ['63401825771;00000000;0001;123456;CACC', 'ACCOUNT'],
    ['ana@example.com;60701190;1234;987654321;SVGS', 'ACCOUNT'],
    ['7d9f0335-8dcc-4054-9bf9-0dbd61d36906;60701190;1;22;TRAN', 'ACCOUNT'],
  ] as const)('accepts %s as %s', (key, type) => {
    expect(pixKeyProblem(key, type)).toBeNull();
  });

  it.each([
    ['63401825772', 'CPF', /check digits/],
    ['634.018.257-71', 'CPF', /11 digits/],
    ['not-an-email', 'EMAIL', /e-mail/],
    [`${'a'.repeat(70)}@example.com`, 'EMAIL', /77/],
    ['11987654321', 'PHONE', /E\.164/],
    ['+1 555 0100', 'PHONE', /E\.164/],
    ['7d9f0335-8dcc-4054-9bf9', 'EVP', /UUID/],
    ['ana@example.com;123;0001;1;CACC', 'ACCOUNT', /ispb/],
    ['ana@example.com;12345678;0001;12-3;CACC', 'ACCOUNT', /account/],
    ['ana@example.com;12345678;0001;123;XXXX', 'ACCOUNT', /CACC/],
    ['key;12345678;0001', 'ACCOUNT', /5 parts/],
    [';60701190;0001;1234567;CACC', 'ACCOUNT', /key part .* empty/],
    ['!!garbage!!;60701190;0001;1234567;CACC', 'ACCOUNT', /key part must be/],
    [`${'a'.repeat(150)};60701190;0001;1234567;CACC`, 'ACCOUNT', /key part must be/],
    ['63401825772;60701190;0001;1234567;CACC', 'ACCOUNT', /key part must be/],
    ['63401825771', 'BOGUS', /pixType/],
  ] as const)('refuses %s as %s', (key, type, reason) => {
    expect(pixKeyProblem(key, type)).toMatch(reason);
  });

  it('detects the type when pixType is omitted', () => {
    expect(detectPixType('63401825771')).toBe('CPF');
    expect(detectPixType('+5511987654321')).toBe('PHONE');
    expect(detectPixType('x')).toBeNull();
    expect(pixKeyProblem('x', undefined)).toMatch(/any Pix key type/);
  });

  it('checks the key part only under the rule a workflow ran with', () => {
    const unchecked = ';60701190;0001;1234567;CACC';
    expect(pixKeyProblem(unchecked, 'ACCOUNT', { checkCompositeKeyPart: false })).toBeNull();
    expect(pixKeyProblem(unchecked, 'ACCOUNT')).toMatch(/key part/);
  });

  it('parses the composite form', () => {
    expect(parseCompositeAccountKey('+5511987654321;12345678;1;22;TRAN')).toEqual({
      key: '+5511987654321',
      ispb: '12345678',
      branch: '1',
      account: '22',
      accountType: 'TRAN',
    });
  });
});
