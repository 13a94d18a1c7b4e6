import { defaultFaults, type EndpointName, type Faults } from './faults';
import type { CobSolicitada, CobStatus, DevolucaoStatus, Natureza, Pessoa, Scope } from './wire';

// Everything the PSP knows, in memory. Money is integer centavos here; the wire's decimal text
// is made at the edge (./views.ts).

export interface CobRecord {
  txid: string;
  /** The request as parsed, to tell the same request again from another one. */
  fingerprint: string;
  request: CobSolicitada;
  amountCentavos: number;
  expiracaoS: number;
  criacao: string;
  createdAtMs: number;
  locId: number;
  location: string;
  pixCopiaECola: string;
  status: CobStatus;
  /** The Pix that paid it (one: a cob takes one payment). */
  e2eIds: string[];
}

export interface ReturnRecord {
  id: string;
  rtrId: string;
  amountCentavos: number;
  natureza: Natureza;
  descricao?: string;
  solicitacao: string;
  liquidacao?: string;
  status: DevolucaoStatus;
  motivo?: string;
  /** The request as parsed (natureza, valor, descricao), to answer the same request again. */
  fingerprint: string;
}

export interface PixRecord {
  e2eId: string;
  txid?: string;
  amountCentavos: number;
  chave: string;
  horario: string;
  horarioMs: number;
  infoPagador?: string;
  pagador: Pessoa;
  returns: ReturnRecord[];
}

export interface WebhookRecord {
  chave: string;
  webhookUrl: string;
  criacao: string;
}

export interface DeliveryLogEntry {
  seq: number;
  url: string;
  body: { pix: unknown[] };
  status: 'pending' | 'delivered' | 'dropped' | 'gave_up';
  attempts: number;
  /** The receiver's status code (or the connection error) of each attempt, in order. */
  answers: (number | string)[];
}

export interface TokenRecord {
  expiresAtMs: number;
  scopes: Set<Scope>;
  /** SHA-256 of the client certificate it was issued to (RFC 8705): another certificate may not use it. */
  certFingerprint: string;
}

export interface ApiPixState {
  tokens: Map<string, TokenRecord>;
  cobs: Map<string, CobRecord>;
  pix: Map<string, PixRecord>;
  webhooks: Map<string, WebhookRecord>;
  deliveries: DeliveryLogEntry[];
  faults: Faults;
  counters: {
    requests: Partial<Record<EndpointName, number>>;
    tokensIssued: number;
    /** TLS handshakes refused (no client certificate, or one of another CA). */
    handshakesRefused: number;
  };
  nextLocId: number;
}

export function createApiPixState(): ApiPixState {
  return {
    tokens: new Map(),
    cobs: new Map(),
    pix: new Map(),
    webhooks: new Map(),
    deliveries: [],
    faults: defaultFaults(),
    counters: { requests: {}, tokensIssued: 0, handshakesRefused: 0 },
    nextLocId: 1,
  };
}

/** Clears everything in place (the same object stays shared by every route). */
export function resetApiPixState(state: ApiPixState): void {
  Object.assign(state, createApiPixState());
}

/** What a Pix still holds: its value minus every return not refused. */
export function returnableCentavos(pix: PixRecord): number {
  const returned = pix.returns
    .filter((r) => r.status !== 'NAO_REALIZADO')
    .reduce((sum, r) => sum + r.amountCentavos, 0);
  return pix.amountCentavos - returned;
}
