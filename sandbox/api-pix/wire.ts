import { z } from 'zod';

// The API Pix wire as this PSP reads it (requests, zod) and writes it (answers, plain types),
// from the Central Bank's OpenAPI document: field names, patterns and limits are the spec's.

/** `[a-zA-Z0-9]{26,35}`: a txid the receiver chose for a cob. */
export const TXID = /^[a-zA-Z0-9]{26,35}$/;
/** `[a-zA-Z0-9]{32}`: an end-to-end id (and an rtrId). */
export const E2E_ID = /^[a-zA-Z0-9]{32}$/;
/** `[a-zA-Z0-9]{1,35}`: the receiver's id for a return. */
export const RETURN_ID = /^[a-zA-Z0-9]{1,35}$/;
/** `\d{1,10}\.\d{2}`: money. */
const MONEY = /^\d{1,10}\.\d{2}$/;

const money = z.string().regex(MONEY, 'deve ser um valor como 10.00');
const cpf = z.string().regex(/^\d{11}$/, 'deve ter 11 dígitos');
const cnpj = z.string().regex(/^[0-9A-Z]{14}$/, 'deve ter 14 caracteres');
const nome = z.string().min(1).max(200);

export const pessoaSchema = z.union([z.object({ cpf, nome }).strict(), z.object({ cnpj, nome }).strict()]);
export type Pessoa = z.infer<typeof pessoaSchema>;

/** The body of `PUT /cob/{txid}` (CobSolicitada). `loc` is refused later: no location is kept here. */
export const cobSolicitadaSchema = z.object({
  calendario: z.object({
    expiracao: z.number().int().positive('deve ser maior que zero').max(2_147_483_647).optional(),
  }),
  devedor: pessoaSchema.optional(),
  loc: z.object({ id: z.number().int() }).optional(),
  valor: z.object({
    original: money,
    modalidadeAlteracao: z.union([z.literal(0), z.literal(1)]).optional(),
  }),
  chave: z.string().min(1).max(77),
  solicitacaoPagador: z.string().max(140).optional(),
  infoAdicionais: z
    .array(z.object({ nome: z.string().max(50), valor: z.string().max(200) }))
    .max(50)
    .optional(),
});
export type CobSolicitada = z.infer<typeof cobSolicitadaSchema>;

export const cobStatuses = [
  'ATIVA',
  'CONCLUIDA',
  'REMOVIDA_PELO_USUARIO_RECEBEDOR',
  'REMOVIDA_PELO_PSP',
] as const;
export type CobStatus = (typeof cobStatuses)[number];

/** CobGerada (and CobCompleta with `pix` once paid). */
export interface Cob {
  calendario: { criacao: string; expiracao: number };
  txid: string;
  revisao: number;
  loc: { id: number; location: string; tipoCob: 'cob'; criacao: string };
  location: string;
  status: CobStatus;
  devedor?: Pessoa;
  valor: { original: string; modalidadeAlteracao?: 0 | 1 };
  chave: string;
  solicitacaoPagador?: string;
  infoAdicionais?: { nome: string; valor: string }[];
  pixCopiaECola: string;
  pix?: Pix[];
}

export const naturezas = [
  'ORIGINAL',
  'RETIRADA',
  'MED_OPERACIONAL',
  'MED_FRAUDE',
  'MED_PIX_AUTOMATICO',
] as const;
export type Natureza = (typeof naturezas)[number];
export type DevolucaoStatus = 'EM_PROCESSAMENTO' | 'DEVOLVIDO' | 'NAO_REALIZADO';

/** The body of `PUT /pix/{e2eid}/devolucao/{id}` (DevolucaoSolicitada). */
export const devolucaoSolicitadaSchema = z.object({
  valor: money,
  natureza: z.enum(['ORIGINAL', 'RETIRADA']).optional(),
  descricao: z.string().max(140).optional(),
});
export type DevolucaoSolicitada = z.infer<typeof devolucaoSolicitadaSchema>;

export interface Devolucao {
  id: string;
  rtrId: string;
  valor: string;
  natureza: Natureza;
  descricao?: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: DevolucaoStatus;
  motivo?: string;
}

/**
 * A received Pix. `pagador` is not in the spec's Pix schema: PSPs add who paid (the spec counts
 * new answer fields as compatible), and pixflow needs it to tell the holder from a third party.
 */
export interface Pix {
  endToEndId: string;
  txid?: string;
  valor: string;
  componentesValor: { original: { valor: string } };
  chave: string;
  horario: string;
  infoPagador?: string;
  pagador: Pessoa;
  devolucoes?: Devolucao[];
}

/** `PUT /webhook/{chave}` (WebhookSolicitado): this PSP posts only over HTTPS. */
export const webhookSolicitadoSchema = z.object({
  webhookUrl: z.url({ protocol: /^https$/, error: 'deve ser uma URL https' }).max(512),
});

/** `GET /pix` query (names with a dot, as the spec spells them). */
export const pixQuerySchema = z
  .object({
    inicio: z.iso.datetime({ offset: true }),
    fim: z.iso.datetime({ offset: true }),
    txid: z.string().regex(RETURN_ID, 'deve respeitar [a-zA-Z0-9]{1,35}').optional(),
    txIdPresente: z.enum(['true', 'false']).optional(),
    devolucaoPresente: z.enum(['true', 'false']).optional(),
    cpf: cpf.optional(),
    cnpj: cnpj.optional(),
    'paginacao.paginaAtual': z.coerce.number().int().min(0).default(0),
    'paginacao.itensPorPagina': z.coerce.number().int().min(1).max(1000).default(100),
  })
  .refine((q) => Date.parse(q.fim) >= Date.parse(q.inicio), {
    path: ['fim'],
    message: 'fim é anterior a inicio',
  })
  .refine((q) => q.cpf === undefined || q.cnpj === undefined, {
    path: ['cnpj'],
    message: 'cpf e cnpj não podem ser usados juntos',
  });

/** The token request's form (RFC 6749 client credentials). */
export const tokenFormSchema = z.object({
  grant_type: z.string().optional(),
  scope: z.string().optional(),
  client_id: z.string().optional(),
  client_secret: z.string().optional(),
});

export const SCOPES = [
  'cob.write',
  'cob.read',
  'pix.write',
  'pix.read',
  'webhook.write',
  'webhook.read',
] as const;
export type Scope = (typeof SCOPES)[number];
