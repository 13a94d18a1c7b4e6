import { isValid } from '@fnando/cpf';
import { describe, expect, it } from 'vitest';
import {
  kycOutcomes,
  lookupTestDocument,
  testDocuments,
  testDocumentsMarkdown,
} from '../../sandbox/test-documents';

describe('sandbox test documents', () => {
  it('are valid, unique CPFs covering every outcome', () => {
    const cpfs = testDocuments.map((d) => d.cpf);
    expect(new Set(cpfs).size).toBe(cpfs.length);
    for (const cpf of cpfs) expect(isValid(cpf), cpf).toBe(true);
    const kyc = new Set(testDocuments.map((d) => d.kyc));
    for (const o of kycOutcomes) {
      expect(kyc.has(o as never), o).toBe(true);
    }
    const liveness = new Set(testDocuments.map((d) => d.liveness));
    expect(liveness.size).toBe(5);
  });

  it('treats any other CPF as regular / manual review', () => {
    expect(lookupTestDocument('47372560802')).toMatchObject({ kyc: 'regular', liveness: 'manual_review' });
  });

  it('renders a Markdown table with every document', () => {
    const md = testDocumentsMarkdown();
    expect(md.split('\n')[0]).toMatch(/^\| CPF \|/);
    for (const d of testDocuments) expect(md).toContain(d.cpf);
  });
});
