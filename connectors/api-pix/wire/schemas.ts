import { z } from 'zod';

// The Central Bank's standard API Pix (bacen/pix-api openapi.yaml, 2.x) as zod schemas, only the
// parts pixflow speaks: OAuth2 tokens, immediate charges (cob), received Pix and their returns
// (devolução), the Pix webhook and its callback, and the problem body every error carries.
// Requests are strict (a field the spec does not name is never sent); answers are read liberally:
// unknown fields pass, and the status and nature words are kept as text, because the spec says
// new enum values may appear at any time. What the words mean is transformers.ts's business.

/** Every endpoint the connector calls, for logs, metrics and error messages. */
export type EndpointName =
  | 'token'
  | 'cob_put'
  | 'cob_get'
  | 'pix_get'
  | 'pix_list'
  | 'return_put'
  | 'return_get'
  | 'webhook_put'
  | 'webhook_get'
  | 'webhook_delete';

/** Money on the wire: a decimal text with two places ("10.00"), as the spec's pattern. */
export const moneyPattern = /^\d{1,10}\.\d{2}$/;
const moneySent = z.string().regex(moneyPattern, 'must be a decimal amount with two places, like 10.00');
/** Read liberally (a PSP writing "10" or "10.5"); the transformers turn it into centavos. */
const moneyRead = z.string().regex(/^\d+(\.\d{1,2})?$/, 'must be a decimal amount like 10.00');

/** The spec's TxId for a charge: 26 to 35 letters and digits. */
export const cobTxidPattern = /^[a-zA-Z0-9]{26,35}$/;
/** The spec's DevolucaoId: 1 to 35 letters and digits, chosen by the receiver. */
export const returnIdPattern = /^[a-zA-Z0-9]{1,35}$/;
/** The spec's EndToEndId: 32 letters and digits. */
export const e2eIdPattern = /^[a-zA-Z0-9]{32}$/;

// ---------------------------------------------------------------- OAuth2

/** The scopes the connector asks for: charges, received Pix and their returns, the webhook. */
export const API_PIX_SCOPES = [
  'cob.write',
  'cob.read',
  'pix.write',
  'pix.read',
  'webhook.write',
  'webhook.read',
] as const;

/** RFC 6749 §5.1; `expires_in` read as a number or its digits. */
export const tokenResponseSchema = z.looseObject({
  access_token: z.string().min(1),
  token_type: z.string().refine((t) => t.toLowerCase() === 'bearer', 'must be Bearer'),
  expires_in: z.union([
    z.number().int().positive(),
    z
      .string()
      .regex(/^\d+$/, 'must be a whole number of seconds')
      .transform(Number)
      .pipe(z.number().positive()),
  ]),
  scope: z.string().optional(),
});
export type TokenResponse = z.infer<typeof tokenResponseSchema>;

// ---------------------------------------------------------------- cob (immediate charge)

/** PessoaFisica: the charge's debtor, as pixflow sends it. */
const devedorSent = z.strictObject({
  cpf: z.string().regex(/^\d{11}$/, 'must be 11 digits'),
  nome: z.string().min(1).max(200),
});

/** CobSolicitada, as pixflow sends it in `PUT /cob/{txid}`. */
export const cobRequestSchema = z.strictObject({
  calendario: z.strictObject({ expiracao: z.number().int().positive() }),
  devedor: devedorSent.optional(),
  valor: z.strictObject({ original: moneySent }),
  chave: z.string().min(1).max(77),
  solicitacaoPagador: z.string().max(140).optional(),
});
export type CobRequest = z.infer<typeof cobRequestSchema>;

/** A person on the wire (debtor or payer): CPF or CNPJ, and a name; any part may be missing. */
const personRead = z.looseObject({
  cpf: z.string().nullish(),
  cnpj: z.string().nullish(),
  nome: z.string().nullish(),
});

/** Devolucao: one return of a received Pix. */
export const returnAnswerSchema = z.looseObject({
  id: z.string().min(1),
  /** Required by the spec; read as optional so a PSP that names it only once it settles is read. */
  rtrId: z.string().nullish(),
  valor: moneyRead,
  /** Absent means ORIGINAL (the spec's words). */
  natureza: z.string().nullish(),
  descricao: z.string().nullish(),
  horario: z.looseObject({ solicitacao: z.string().nullish(), liquidacao: z.string().nullish() }).nullish(),
  status: z.string().min(1),
  motivo: z.string().nullish(),
});
export type ReturnAnswer = z.infer<typeof returnAnswerSchema>;

/**
 * Pix: one Pix received. The spec (2.6.3 on) no longer carries the payer (`pagador`, CPF or CNPJ
 * and name, was in 2.0 and 2.1); many PSPs still send it, so it is read when present.
 * `devolucoes` is an array; the spec's own webhook example shows a lone object, read as one.
 */
export const pixSchema = z.looseObject({
  endToEndId: z.string().min(1),
  txid: z.string().nullish(),
  valor: moneyRead,
  horario: z.string().min(1),
  chave: z.string().nullish(),
  infoPagador: z.string().nullish(),
  pagador: personRead.nullish(),
  devolucoes: z.preprocess(
    (v) => (v && typeof v === 'object' && !Array.isArray(v) ? [v] : v),
    z.array(returnAnswerSchema).nullish(),
  ),
});
export type PixAnswer = z.infer<typeof pixSchema>;

/** CobGerada / CobCompleta: the answer of `PUT /cob/{txid}` and `GET /cob/{txid}`. */
export const cobAnswerSchema = z.looseObject({
  txid: z.string().min(1),
  revisao: z.number().int().nonnegative(),
  calendario: z.looseObject({
    criacao: z.string().min(1),
    expiracao: z.union([z.number().int().positive(), z.string().regex(/^\d+$/).transform(Number)]),
  }),
  loc: z.looseObject({ id: z.number().int().optional(), location: z.string().optional() }).nullish(),
  location: z.string().nullish(),
  /** ATIVA, CONCLUIDA, REMOVIDA_PELO_USUARIO_RECEBEDOR, REMOVIDA_PELO_PSP (or a word added later). */
  status: z.string().min(1),
  devedor: personRead.nullish(),
  valor: z.looseObject({ original: moneyRead }),
  chave: z.string().min(1),
  solicitacaoPagador: z.string().nullish(),
  pixCopiaECola: z.string().nullish(),
  pix: z.array(pixSchema).nullish(),
});
export type CobAnswer = z.infer<typeof cobAnswerSchema>;

// ---------------------------------------------------------------- GET /pix (reconciliation)

const paginacaoSchema = z.looseObject({
  paginaAtual: z.number().int().nonnegative(),
  itensPorPagina: z.number().int().positive(),
  quantidadeDePaginas: z.number().int().nonnegative(),
  quantidadeTotalDeItens: z.number().int().nonnegative(),
});

/** The query of `GET /pix`: a window of RFC 3339 instants and a page. */
export const pixListQuerySchema = z.strictObject({
  inicio: z.iso.datetime({ offset: true }),
  fim: z.iso.datetime({ offset: true }),
  paginaAtual: z.number().int().nonnegative().optional(),
  itensPorPagina: z.number().int().min(1).max(1000).optional(),
});
export type PixListQuery = z.infer<typeof pixListQuerySchema>;

/** PixConsultados. */
export const pixListAnswerSchema = z.looseObject({
  parametros: z.looseObject({ inicio: z.string(), fim: z.string(), paginacao: paginacaoSchema }),
  pix: z.array(pixSchema).nullish(),
});
export type PixListAnswer = z.infer<typeof pixListAnswerSchema>;

// ---------------------------------------------------------------- devolução

/** DevolucaoSolicitada, as pixflow sends it: only returns it asks itself (ORIGINAL). */
export const returnRequestSchema = z.strictObject({
  valor: moneySent,
  natureza: z.literal('ORIGINAL'),
  descricao: z.string().max(140).optional(),
});
export type ReturnRequestBody = z.infer<typeof returnRequestSchema>;

// ---------------------------------------------------------------- webhook

/** WebhookSolicitado: where the PSP posts (it appends `/pix`). */
export const webhookRequestSchema = z.strictObject({
  webhookUrl: z.url({ protocol: /^https$/ }),
});

/** WebhookCompleto. */
export const webhookAnswerSchema = z.looseObject({
  webhookUrl: z.string().min(1),
  chave: z.string().nullish(),
  criacao: z.string().nullish(),
});

/** The callback the PSP posts to `{webhookUrl}/pix`. */
export const webhookCallbackSchema = z.looseObject({ pix: z.array(pixSchema) });
export type WebhookCallback = z.infer<typeof webhookCallbackSchema>;

// ---------------------------------------------------------------- errors

/** Violacao: which property broke which rule. */
const violationSchema = z.looseObject({
  razao: z.string().nullish(),
  propriedade: z.string().nullish(),
  valor: z.string().nullish(),
});

/** Problema (RFC 7807): every error the API Pix answers. */
export const problemSchema = z.looseObject({
  type: z.string().min(1),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().nullish(),
  correlationId: z.string().nullish(),
  violacoes: z.array(violationSchema).nullish(),
});
export type Problem = z.infer<typeof problemSchema>;
