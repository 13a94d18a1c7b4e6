import { type ApiPixTransportOptions, checkRequest, createApiPixTransport, parseAnswer } from './transport';
import {
  type CobAnswer,
  type CobRequest,
  cobAnswerSchema,
  cobRequestSchema,
  type PixAnswer,
  type PixListAnswer,
  type PixListQuery,
  pixListAnswerSchema,
  pixListQuerySchema,
  pixSchema,
  type ReturnAnswer,
  type ReturnRequestBody,
  returnAnswerSchema,
  returnRequestSchema,
  webhookAnswerSchema,
  webhookRequestSchema,
} from './wire/schemas';

// The API Pix endpoints pixflow uses as typed methods over the wire: charges (cob), received Pix
// and their returns, the Pix webhook. Every request is checked before it is sent and every answer
// parsed (transport.ts); connector.ts turns the answers into pixflow's types.

export type { ApiPixCallEvent, ApiPixLogger, ApiPixTransportOptions } from './transport';

const seg = encodeURIComponent;

export function createApiPixClient(options: ApiPixTransportOptions) {
  const transport = createApiPixTransport(options);
  return {
    get tokenRequests(): number {
      return transport.tokens.tokenRequests;
    },
    close: transport.close,

    /** PUT /cob/{txid}: creates the charge (or revises it while ATIVA). */
    async putCob(txid: string, request: CobRequest): Promise<CobAnswer> {
      const body = checkRequest(cobRequestSchema, request, 'cob_put');
      const res = await transport.call('cob_put', 'PUT', `/cob/${seg(txid)}`, body);
      return parseAnswer(cobAnswerSchema, res.body, 'cob_put');
    },

    /** GET /cob/{txid}: the charge and, once paid, its Pix. */
    async getCob(txid: string): Promise<CobAnswer> {
      const res = await transport.call('cob_get', 'GET', `/cob/${seg(txid)}`);
      return parseAnswer(cobAnswerSchema, res.body, 'cob_get');
    },

    /** GET /pix/{e2eid}: a received Pix with its returns. */
    async getPix(e2eId: string): Promise<PixAnswer> {
      const res = await transport.call('pix_get', 'GET', `/pix/${seg(e2eId)}`);
      return parseAnswer(pixSchema, res.body, 'pix_get');
    },

    /** GET /pix: one page of the Pix received in a window (reconciliation). */
    async listPix(query: PixListQuery): Promise<PixListAnswer> {
      const q = checkRequest(pixListQuerySchema, query, 'pix_list');
      const params = new URLSearchParams({ inicio: q.inicio, fim: q.fim });
      if (q.paginaAtual !== undefined) params.set('paginacao.paginaAtual', String(q.paginaAtual));
      if (q.itensPorPagina !== undefined) params.set('paginacao.itensPorPagina', String(q.itensPorPagina));
      const res = await transport.call('pix_list', 'GET', `/pix?${params.toString()}`);
      return parseAnswer(pixListAnswerSchema, res.body, 'pix_list');
    },

    /** PUT /pix/{e2eid}/devolucao/{id}: asks for a return under the receiver's own id. */
    async putReturn(e2eId: string, id: string, request: ReturnRequestBody): Promise<ReturnAnswer> {
      const body = checkRequest(returnRequestSchema, request, 'return_put');
      const res = await transport.call('return_put', 'PUT', `/pix/${seg(e2eId)}/devolucao/${seg(id)}`, body);
      return parseAnswer(returnAnswerSchema, res.body, 'return_put');
    },

    /** GET /pix/{e2eid}/devolucao/{id}. */
    async getReturn(e2eId: string, id: string): Promise<ReturnAnswer> {
      const res = await transport.call('return_get', 'GET', `/pix/${seg(e2eId)}/devolucao/${seg(id)}`);
      return parseAnswer(returnAnswerSchema, res.body, 'return_get');
    },

    /** PUT /webhook/{chave}: the PSP posts `{ pix: [...] }` to `{webhookUrl}/pix`. */
    async putWebhook(chave: string, webhookUrl: string): Promise<void> {
      const body = checkRequest(webhookRequestSchema, { webhookUrl }, 'webhook_put');
      await transport.call('webhook_put', 'PUT', `/webhook/${seg(chave)}`, body);
    },

    /** GET /webhook/{chave}: the URL configured. */
    async getWebhook(chave: string): Promise<string> {
      const res = await transport.call('webhook_get', 'GET', `/webhook/${seg(chave)}`);
      return parseAnswer(webhookAnswerSchema, res.body, 'webhook_get').webhookUrl;
    },

    /** DELETE /webhook/{chave}. */
    async deleteWebhook(chave: string): Promise<void> {
      await transport.call('webhook_delete', 'DELETE', `/webhook/${seg(chave)}`);
    },
  };
}

export type ApiPixClient = ReturnType<typeof createApiPixClient>;
