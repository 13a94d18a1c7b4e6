import { createHash } from 'node:crypto';
import { type KycRecordFor, kycPlanFields, type Plan } from '../connectors/identity-payments/wire/schemas';
import type { TestDocument } from './test-documents';

// Deterministic fake registry data derived from the CPF (same CPF, same person, every time).

const FIRST = ['Ana', 'Bruno', 'Carla', 'Diego', 'Elisa', 'Fabio', 'Gabriela', 'Heitor', 'Isabela', 'Joao'];
const LAST = [
  'Silva',
  'Santos',
  'Oliveira',
  'Souza',
  'Lima',
  'Pereira',
  'Costa',
  'Almeida',
  'Ribeiro',
  'Gomes',
];
const CITIES: [string, string][] = [
  ['Sao Paulo', 'SP'],
  ['Rio de Janeiro', 'RJ'],
  ['Belo Horizonte', 'MG'],
  ['Curitiba', 'PR'],
  ['Recife', 'PE'],
];

function seed(cpf: string): Buffer {
  return createHash('sha256').update(cpf).digest();
}

function pick<T>(list: readonly T[], byte: number | undefined): T {
  return list[(byte ?? 0) % list.length] as T;
}

/** Registry status per outcome. Codes follow the Receita Federal numbering (the contract shows only 0). */
function statusOf(doc: TestDocument): { status: string | null; status_code: number } {
  switch (doc.kyc) {
    case 'pendente_regularizacao':
      return { status: 'pendente_regularizacao', status_code: 4 };
    case 'suspenso':
      return { status: 'suspenso', status_code: 2 };
    case 'cancelado':
      return { status: 'cancelado', status_code: 9 };
    case 'null_status':
      return { status: null, status_code: 8 };
    case 'titularfalecido':
      return { status: 'titularfalecido', status_code: 3 };
    case 'restricted':
      return { status: 'consta_lista_restritiva', status_code: 6 };
    default:
      return { status: 'regular', status_code: 0 };
  }
}

function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export interface Person {
  name: string;
  motherName: string;
  fatherName: string;
  gender: 'M' | 'F';
  birthDate: string;
  age: number;
  status: string | null;
  statusCode: number;
  internalStatus: string | null;
  internalStatusCode: number | null;
  dateDeath: string | null;
  isPep: boolean;
  isUnder18: boolean;
  address: {
    street: string;
    number: string;
    neighborhood: string;
    city: string;
    state: string;
    zip_code: string;
    country: string;
    complement: string;
  };
}

export function personFor(doc: TestDocument, now: number): Person {
  const s = seed(doc.cpf);
  const firstIndex = (s[0] ?? 0) % FIRST.length;
  const last = pick(LAST, s[1]);
  const age = doc.kyc === 'under_18' ? 16 : 21 + ((s[2] ?? 0) % 50);
  const today = new Date(now);
  const birth = Date.UTC(today.getUTCFullYear() - age - 1, (s[3] ?? 0) % 12, 1 + ((s[4] ?? 0) % 28));
  // Birthday already passed this year only if it is before today; recompute age exactly.
  const birthDate = isoDay(birth);
  const b = new Date(birth);
  let exactAge = today.getUTCFullYear() - b.getUTCFullYear();
  const beforeBirthday =
    today.getUTCMonth() < b.getUTCMonth() ||
    (today.getUTCMonth() === b.getUTCMonth() && today.getUTCDate() < b.getUTCDate());
  if (beforeBirthday) exactAge -= 1;
  const { status, status_code } = statusOf(doc);
  const [city, state] = pick(CITIES, s[5]);
  return {
    name: `${FIRST[firstIndex]} ${pick(LAST, s[6])} ${last}`,
    motherName: `${FIRST[((s[7] ?? 0) % 5) * 2]} ${pick(LAST, s[8])} ${last}`,
    fatherName: `${FIRST[((s[9] ?? 0) % 5) * 2 + 1]} ${last}`,
    gender: firstIndex % 2 === 0 ? 'F' : 'M',
    birthDate,
    age: exactAge,
    status,
    statusCode: status_code,
    internalStatus: status === null ? null : status === 'regular' ? 'ATIVO' : 'INATIVO',
    internalStatusCode: status === null ? null : status === 'regular' ? 1 : 2,
    dateDeath: doc.kyc === 'titularfalecido' ? '2021-03-14' : null,
    isPep: doc.kyc === 'pep',
    isUnder18: exactAge < 18,
    address: {
      street: `Rua ${pick(LAST, s[10])}`,
      number: String(1 + ((s[11] ?? 0) % 999)),
      neighborhood: 'Centro',
      city,
      state,
      zip_code: String(10_000_000 + (s.readUInt32BE(12) % 89_999_999)),
      country: 'Brasil',
      complement: (s[16] ?? 0) % 2 === 0 ? '' : `Apto ${1 + ((s[17] ?? 0) % 200)}`,
    },
  };
}

/** The full plan_full record; `kycRecordFor` keeps exactly the requested plan's fields. */
function fullRecord(doc: TestDocument, now: number): KycRecordFor<'plan_full'> {
  const p = personFor(doc, now);
  const s = seed(`${doc.cpf}:more`);
  const email = `${p.name.split(' ')[0]?.toLowerCase()}.${doc.cpf.slice(-4)}@example.com`;
  return {
    cpf: doc.cpf,
    name: p.name,
    is_under_18: p.isUnder18,
    status: p.status,
    status_code: p.statusCode,
    date_death: p.dateDeath,
    is_pep: p.isPep,
    birth_date: p.birthDate,
    age: p.age,
    internal_status: p.internalStatus,
    internal_status_code: p.internalStatusCode,
    mother_name: p.motherName,
    father_name: p.fatherName,
    address: p.address,
    employment: {
      employer_name: `${pick(LAST, s[0])} Comercio Ltda`,
      position: pick(['Analista', 'Vendedor', 'Engenheira', 'Professor'], s[1]),
      salary: 1500 + ((s[2] ?? 0) % 100) * 100,
      start_date: isoDay(Date.UTC(2015 + ((s[3] ?? 0) % 9), (s[4] ?? 0) % 12, 1)),
    },
    financial_info: {
      bank_accounts: [
        {
          bank: '00000000',
          account_type: 'trans',
          account_number: String(100_000 + ((s.readUInt32BE(5) % 899_999) | 0)),
          branch_number: '0001',
          dict: `***.${doc.cpf.slice(3, 6)}.${doc.cpf.slice(6, 9)}-**`,
        },
      ],
      credit_score: 300 + ((s[9] ?? 0) % 600),
    },
    contacts_info: [{ phone: `+55119${String(10_000_000 + (s.readUInt32BE(10) % 89_999_999))}` }, { email }],
    family_members: [
      { relationship: 'mae', name: p.motherName, document: '' },
      { relationship: 'pai', name: p.fatherName, document: '' },
    ],
    documents: { rg: String(10_000_000 + (s.readUInt32BE(14) % 89_999_999)), passport: '' },
    custom_risk_analysis: { score: (s[18] ?? 0) % 100, level: 'low', last_updated: isoDay(now) },
    custom_info_compliance: p.isPep
      ? [{ type: 'pixmed', description: 'Pessoa exposta politicamente (sandbox)' }]
      : [],
  };
}

export function kycRecordFor<P extends Plan>(doc: TestDocument, plan: P, now: number): KycRecordFor<P> {
  const full = fullRecord(doc, now) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of kycPlanFields(plan)) out[key] = full[key];
  return out as KycRecordFor<P>;
}
