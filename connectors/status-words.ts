// The one table of the words providers use for where a payment stands, in any letter case, with or
// without accents, in Portuguese or English. A word missing here is never guessed at: the caller
// gets `undefined` and treats the answer as one it cannot classify (the flow keeps waiting and
// an operator is told). Add a provider's word here, not in a connector.

export type PaymentStanding = 'settled' | 'pending' | 'failed';

const WORDS: Record<PaymentStanding, readonly string[]> = {
  settled: [
    'completed',
    'complete',
    'paid',
    'approved',
    'confirmed',
    'settled',
    'success',
    'successful',
    'succeeded',
    'done',
    'concluida',
    'concluido',
    'liquidada',
    'liquidado',
    'paga',
    'pago',
    'aprovada',
    'aprovado',
    'efetivada',
    'efetivado',
    'realizada',
    'realizado',
    'finalizada',
    'finalizado',
  ],
  pending: [
    'processing',
    'pending',
    'created',
    'requested',
    'waiting',
    'open',
    'active',
    'in_progress',
    'ativa',
    'ativo',
    'pendente',
    'criada',
    'criado',
    'solicitada',
    'solicitado',
    'aguardando',
    'aguardando_pagamento',
    'em_processamento',
    'processando',
    'em_andamento',
  ],
  failed: [
    'failed',
    'failure',
    'error',
    'rejected',
    'refused',
    'denied',
    'cancelled',
    'canceled',
    'expired',
    'returned',
    'reversed',
    'falha',
    'falhou',
    'erro',
    'rejeitada',
    'rejeitado',
    'recusada',
    'recusado',
    'negada',
    'negado',
    'cancelada',
    'cancelado',
    'expirada',
    'expirado',
    'devolvida',
    'devolvido',
    'estornada',
    'estornado',
    'removida_pelo_usuario_recebedor',
    'removida_pelo_psp',
  ],
};

/** Lower case, no accents, spaces and hyphens as underscores: `Concluída` -> `concluida`. */
export function normaliseWord(word: string): string {
  return word
    .normalize('NFD')
    .replace(/\p{Diacritic}/gu, '')
    .trim()
    .toLowerCase()
    .replace(/[\s-]+/g, '_');
}

const STANDING = new Map<string, PaymentStanding>(
  (Object.entries(WORDS) as [PaymentStanding, readonly string[]][]).flatMap(([standing, words]) =>
    words.map((w) => [w, standing] as const),
  ),
);

/** Where a payment stands by the provider's word; undefined for a word the table does not know. */
export function standingOf(word: unknown): PaymentStanding | undefined {
  if (typeof word !== 'string' || word.trim() === '') return undefined;
  return STANDING.get(normaliseWord(word));
}

/** Every word the table knows, by standing (docs and tests). */
export const STATUS_WORDS = WORDS;
