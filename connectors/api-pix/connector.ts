import { z } from 'zod';
import { BadRequestError, NotFoundError } from '../errors';
import type { Capability, CollectingConnector, PixReturn, ReceivedPix, ReturnOperations } from '../types';
import { type ApiPixCallEvent, type ApiPixLogger, createApiPixClient } from './client';
import {
  centavosOf,
  toCobRequest,
  toDepositCharge,
  toDepositLookup,
  toPixReturn,
  toReceivedPix,
  toReturnRequestBody,
} from './transformers';
import { toApiPixTxid } from './txid';

// Any PSP speaking the Central Bank's standard API Pix as a pixflow connector: it collects deposits
// (immediate charges, `cob`) and returns received Pix (devolução), over OAuth2 client credentials
// and mutual TLS. It does not pay out. Its wire client is client.ts; transformers.ts turns every
// answer into pixflow's types.

const pem = (what: string) =>
  z.string().refine((v) => v.includes('-----BEGIN '), `must be the ${what} in PEM (-----BEGIN ...)`);

/** It collects and returns; it pays out nothing and knows no one's identity. */
export const API_PIX_CAPABILITIES = ['collect', 'return'] as const satisfies readonly Capability[];

/** The options' data, checked at creation: a connector without its certificate is never made. */
const optionsSchema = z.object({
  name: z.string().min(1).default('api-pix'),
  baseUrl: z.url({ protocol: /^https$/ }),
  tokenUrl: z.url({ protocol: /^https$/ }).optional(),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
  cert: pem('client certificate'),
  key: pem('client private key'),
  ca: pem("PSP's CA certificate").optional(),
  pixKey: z.string().min(1).max(77),
  expirySeconds: z.number().int().positive().default(1800),
  timeoutMs: z.number().int().positive().default(10_000),
  tokenSafetyMarginMs: z.number().int().nonnegative().optional(),
});

export interface ApiPixOptions {
  /** The connector's name in routing and in a deposit's record; default `api-pix` (two accounts, two names). */
  name?: string;
  /** The PSP's API base URL (HTTPS), up to the version, e.g. `https://pix.example.com/api/v2`. */
  baseUrl: string;
  /** The OAuth2 token endpoint; default `${baseUrl}/oauth/token`. */
  tokenUrl?: string;
  clientId: string;
  clientSecret: string;
  /** pixflow's client certificate and its key, as PEM text. */
  cert: string;
  key: string;
  /**
   * The CA that signed the PSP's server certificate, as PEM text: then only it is trusted. Absent,
   * the usual public roots are (a PSP whose API has a publicly trusted certificate).
   */
  ca?: string;
  /** The account's Pix key: charges are made to it and its webhook is pixflow's. */
  pixKey: string;
  /** How long a charge can be paid; default 1800 s. */
  expirySeconds?: number;
  /** Per HTTP call; default 10 s. */
  timeoutMs?: number;
  logger?: ApiPixLogger;
  /** Called after every HTTP call (metrics). */
  onCall?: (call: ApiPixCallEvent) => void;
  /** Refresh the token this long before it expires; default 60 s. */
  tokenSafetyMarginMs?: number;
}

export type ApiPixConnector = CollectingConnector &
  ReturnOperations & {
    /** Sets the account's Pix webhook: the PSP will post to `${url}/pix`. */
    registerWebhook(url: string): Promise<void>;
    /** The webhook URL the PSP holds for the account's key; undefined when none is set. */
    webhookUrl(): Promise<string | undefined>;
    /** Removes the account's webhook (nothing when none is set). */
    removeWebhook(): Promise<void>;
    /** Every Pix received between two instants (RFC 3339), every page (reconciliation). */
    receivedPixBetween(from: string, to: string): Promise<ReceivedPix[]>;
    /** Closes the connector's kept-alive TLS connections. */
    close(): void;
  };

/** undefined when the PSP answers that the thing asked for does not exist. */
async function unlessNotFound<T>(read: () => Promise<T>): Promise<T | undefined> {
  try {
    return await read();
  } catch (err) {
    if (err instanceof NotFoundError) return undefined;
    throw err;
  }
}

type Options = z.infer<typeof optionsSchema>;

/** The options checked; a bad one throws naming the option, never its value (a secret or a key). */
function readOptions(options: ApiPixOptions): Options {
  const parsed = optionsSchema.safeParse(options);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw new TypeError(`API Pix connector option ${issue?.path.join('.')}: ${issue?.message}`);
}

type ApiPixClient = ReturnType<typeof createApiPixClient>;

/** `collect`: a charge per deposit, to the account's key, and what its inquiry proves. */
function collectOperations(
  client: ApiPixClient,
  o: Options,
): Pick<ApiPixConnector, 'createCharge' | 'lookUpDeposit'> {
  return {
    async createCharge(request) {
      const apiTxid = toApiPixTxid(request.txid);
      const body = toCobRequest(request, o.pixKey, o.expirySeconds);
      try {
        return toDepositCharge(await client.putCob(apiTxid, body), request.txid);
      } catch (err) {
        // Asked again after the PSP made it (an answer lost, the charge paid since): a PUT of a
        // charge no longer ATIVA is refused, yet the charge is the one asked for.
        if (!(err instanceof BadRequestError) || err.endpoint !== 'cob_put') throw err;
        const held = await unlessNotFound(() => client.getCob(apiTxid));
        const same =
          held !== undefined &&
          held.chave === body.chave &&
          centavosOf(held.valor.original, 'valor.original', 'cob_get') === request.amountCentavos;
        if (!held || !same) throw err;
        return toDepositCharge(held, request.txid);
      }
    },

    async lookUpDeposit(txid) {
      const cob = await unlessNotFound(() => client.getCob(toApiPixTxid(txid)));
      return cob ? toDepositLookup(cob) : { state: 'not_found' };
    },
  };
}

/** `return`: a received Pix sent back under pixflow's own id, and every return of it. */
function returnOperations(client: ApiPixClient): ReturnOperations {
  /**
   * The return asked again under the same id, as the PSP holds it. The spec answers a second PUT
   * with an id already used as a refusal (PixDevolucaoInvalida); the return it names is the one
   * asked, if it is the same amount.
   */
  async function existingReturn(e2eId: string, returnId: string, amountCentavos: number) {
    const held = await unlessNotFound(() => client.getReturn(e2eId, returnId));
    if (!held) return undefined;
    const existing = toPixReturn(held, 'return_get');
    return existing.amountCentavos === amountCentavos ? existing : undefined;
  }

  return {
    async requestReturn(request): Promise<PixReturn> {
      try {
        const answer = await client.putReturn(request.e2eId, request.returnId, toReturnRequestBody(request));
        return toPixReturn(answer, 'return_put');
      } catch (err) {
        if (!(err instanceof BadRequestError) || err.endpoint !== 'return_put') throw err;
        const existing = await existingReturn(request.e2eId, request.returnId, request.amountCentavos);
        if (!existing) throw err;
        return existing;
      }
    },

    async lookUpReturn(e2eId, returnId) {
      const answer = await unlessNotFound(() => client.getReturn(e2eId, returnId));
      return answer ? toPixReturn(answer, 'return_get') : { state: 'not_found' };
    },

    async lookUpReceivedPix(e2eId) {
      const pix = await unlessNotFound(() => client.getPix(e2eId));
      return pix ? toReceivedPix(pix, 'pix_get') : undefined;
    },
  };
}

export function createApiPixConnector(options: ApiPixOptions): ApiPixConnector {
  const o = readOptions(options);
  const baseUrl = o.baseUrl.replace(/\/+$/, '');
  const client = createApiPixClient({
    baseUrl,
    tokenUrl: o.tokenUrl ?? `${baseUrl}/oauth/token`,
    clientId: o.clientId,
    clientSecret: o.clientSecret,
    cert: o.cert,
    key: o.key,
    ...(o.ca === undefined ? {} : { ca: o.ca }),
    timeoutMs: o.timeoutMs,
    tokenSafetyMarginMs: o.tokenSafetyMarginMs,
    logger: options.logger,
    onCall: options.onCall,
  });

  return {
    name: o.name,
    capabilities: API_PIX_CAPABILITIES,
    get tokenRequests() {
      return client.tokenRequests;
    },
    close: client.close,
    ...collectOperations(client, o),
    ...returnOperations(client),

    async registerWebhook(url) {
      await client.putWebhook(o.pixKey, url);
    },

    webhookUrl: () => unlessNotFound(() => client.getWebhook(o.pixKey)),

    async removeWebhook() {
      await unlessNotFound(() => client.deleteWebhook(o.pixKey));
    },

    async receivedPixBetween(from, to) {
      const received: ReceivedPix[] = [];
      for (let page = 0; ; page += 1) {
        const answer = await client.listPix({
          inicio: from,
          fim: to,
          paginaAtual: page,
          itensPorPagina: 1000,
        });
        for (const pix of answer.pix ?? []) received.push(toReceivedPix(pix, 'pix_list'));
        if (page + 1 >= answer.parametros.paginacao.quantidadeDePaginas) return received;
      }
    },
  };
}
