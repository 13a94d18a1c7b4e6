import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testDocuments } from '../../sandbox/test-documents';
import {
  DeceasedOrUnderAgeError,
  DocumentNotFoundError,
  deceasedOrUnderAgeErrorSchema,
  documentNotFoundErrorSchema,
  InvalidDocumentError,
  kycInvalidDocumentErrorSchema,
  kycPlanFields,
  kycRecordSchemas,
  plansInOrder,
  RestrictedDocumentError,
  restrictDocumentErrorSchema,
} from '../helpers/identity-payments-wire';
import { clientFor, rawToken, startProviderSandbox } from './support';

type Sandbox = Awaited<ReturnType<typeof startProviderSandbox>>;
let sb: Sandbox;
let client: ReturnType<typeof clientFor>;

beforeAll(async () => {
  sb = await startProviderSandbox();
  client = clientFor(sb.url);
});
afterAll(() => sb.close());

const recordDocs = testDocuments.filter(
  (d) => !['restricted', 'not_found', 'deceased_or_under_age_error'].includes(d.kyc),
);

async function rawKyc(document: string) {
  const res = await fetch(`${sb.url}/kyc/${document}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: await rawToken(sb.url) },
    body: JSON.stringify({ plan: 'plan_basic' }),
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

describe('POST /kyc/:document', () => {
  for (const plan of plansInOrder) {
    it(`returns exactly the ${plan} fields for every record-returning test document`, async () => {
      for (const doc of recordDocs) {
        const record = await client.kyc(doc.cpf, plan);
        expect(Object.keys(record).sort(), doc.cpf).toEqual(kycPlanFields(plan).sort());
        expect(kycRecordSchemas[plan].safeParse(record).success).toBe(true);
        expect(record.cpf).toBe(doc.cpf);
      }
    });
  }

  it('field sets are cumulative', () => {
    for (let i = 1; i < plansInOrder.length; i++) {
      const smaller = kycPlanFields(plansInOrder[i - 1]!);
      const larger = kycPlanFields(plansInOrder[i]!);
      expect(larger.length).toBeGreaterThan(smaller.length);
      for (const f of smaller) expect(larger).toContain(f);
    }
  });

  it('gives each designated outcome', async () => {
    const expected: Record<
      string,
      Partial<{ status: string | null; is_pep: boolean; is_under_18: boolean }>
    > = {
      regular: { status: 'regular', is_pep: false, is_under_18: false },
      pendente_regularizacao: { status: 'pendente_regularizacao' },
      suspenso: { status: 'suspenso' },
      cancelado: { status: 'cancelado' },
      null_status: { status: null },
      titularfalecido: { status: 'titularfalecido' },
      pep: { status: 'regular', is_pep: true },
      under_18: { status: 'regular', is_under_18: true },
    };
    for (const doc of recordDocs) {
      const r = await client.kyc(doc.cpf, 'plan_standard');
      expect(r, doc.cpf).toMatchObject(expected[doc.kyc] ?? {});
      if (doc.kyc === 'titularfalecido') expect(r.date_death).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      else expect(r.date_death).toBeNull();
      if (doc.kyc === 'regular' && doc.liveness === 'manual_review') expect(r.status_code).toBe(0);
      if (doc.kyc === 'under_18') expect(r.age).toBeLessThan(18);
    }
    const other = await client.kyc('47372560802', 'plan_basic');
    expect(other.status).toBe('regular');
  });

  it('is deterministic per CPF', async () => {
    const a = await client.kyc('63401825771', 'plan_full');
    const b = await client.kyc('63401825771', 'plan_full');
    expect(a).toEqual(b);
  });

  it('answers the contract error shapes', async () => {
    const byKyc = (k: string) => testDocuments.find((d) => d.kyc === k)!.cpf;
    const cases = [
      [byKyc('restricted'), restrictDocumentErrorSchema, RestrictedDocumentError],
      [byKyc('not_found'), documentNotFoundErrorSchema, DocumentNotFoundError],
      [byKyc('deceased_or_under_age_error'), deceasedOrUnderAgeErrorSchema, DeceasedOrUnderAgeError],
      ['12345678900', kycInvalidDocumentErrorSchema, InvalidDocumentError],
      ['123', kycInvalidDocumentErrorSchema, InvalidDocumentError],
    ] as const;
    for (const [cpf, schema, Cls] of cases) {
      const raw = await rawKyc(cpf);
      expect(raw.status).toBe(400);
      expect(schema.safeParse(raw.body).success, cpf).toBe(true);
      await expect(client.kyc(cpf, 'plan_basic')).rejects.toBeInstanceOf(Cls);
    }
  });

  it('refuses an unknown plan with 400', async () => {
    const res = await fetch(`${sb.url}/kyc/63401825771`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: await rawToken(sb.url) },
      body: JSON.stringify({ plan: 'plan_gold' }),
    });
    expect(res.status).toBe(400);
  });
});
