import { centavosToDecimal, decimalTextToCentavos } from '../../common/money';
import { ContractError, UnclassifiedAnswerError } from '../errors';
import type {
  ChargeRequest,
  DepositCharge,
  DepositLookup,
  PixNotification,
  PixReturn,
  ReceivedPix,
  ReturnNature,
  ReturnRequest,
} from '../types';
import { fromApiPixTxid } from './txid';
import type { CobAnswer, CobRequest, PixAnswer, ReturnAnswer, ReturnRequestBody } from './wire/schemas';

// pixflow's requests in the API Pix's words, and its answers in pixflow's. Money is integer
// centavos here and decimal text on the wire, converted by integers only (common/money.ts). A
// status or nature word the spec does not name (it says new ones may come) is an
// UnclassifiedAnswerError naming the field, never a guess: the flow keeps asking and an operator
// is told.

const unclassified = (op: string, field: string, value: unknown) =>
  new UnclassifiedAnswerError(
    `api-pix ${op}: ${field} ${JSON.stringify(value)?.slice(0, 60) ?? 'undefined'} is not a value pixflow knows`,
    { op, field, endpoint: op },
  );

/** "", null and absent are all "none". */
const present = (v: string | null | undefined): string | undefined =>
  v === null || v === undefined || v.trim() === '' ? undefined : v;

const digits = (v: string) => v.replace(/\D/g, '');

/** A wire amount ("10.00") in centavos; anything else breaks the contract at `path`. */
export function centavosOf(valor: string, path: string, endpoint: string): number {
  const centavos = decimalTextToCentavos(valor);
  if (centavos === null) {
    throw new ContractError(`api-pix ${endpoint}: ${path} ${valor} is not an amount`, { path, endpoint });
  }
  return centavos;
}

/** The charge pixflow asks for: the account's key, its expiry, the person as the debtor. */
export function toCobRequest(request: ChargeRequest, chave: string, expirySeconds: number): CobRequest {
  return {
    calendario: { expiracao: expirySeconds },
    devedor: { cpf: digits(request.payer.cpf), nome: request.payer.name.slice(0, 200) },
    valor: { original: centavosToDecimal(request.amountCentavos) },
    chave,
  };
}

/** The charge created: its BR Code and until when it can be paid (creation + expiry). */
export function toDepositCharge(cob: CobAnswer, pixflowTxid: string): DepositCharge {
  const payload = present(cob.pixCopiaECola);
  if (!payload) {
    throw new ContractError('api-pix cob_put: the charge has no pixCopiaECola', {
      path: 'pixCopiaECola',
      endpoint: 'cob_put',
    });
  }
  const created = Date.parse(cob.calendario.criacao);
  if (Number.isNaN(created)) {
    throw new ContractError(
      `api-pix cob_put: calendario.criacao ${cob.calendario.criacao} is not a date-time`,
      {
        path: 'calendario.criacao',
        endpoint: 'cob_put',
      },
    );
  }
  return {
    txid: pixflowTxid,
    payload,
    expiresAt: new Date(created + cob.calendario.expiracao * 1000).toISOString(),
    amountCentavos: centavosOf(cob.valor.original, 'valor.original', 'cob_put'),
  };
}

/** Who paid, when the PSP says (the spec no longer carries it: absent, the rules cannot tell). */
function payerOf(pix: PixAnswer): { payerName?: string; payerCpf?: string } {
  const name = present(pix.pagador?.nome);
  const cpf = present(pix.pagador?.cpf);
  return { ...(name ? { payerName: name } : {}), ...(cpf ? { payerCpf: digits(cpf) } : {}) };
}

/** What a charge's inquiry proves. Only a CONCLUIDA charge with its Pix is a payment. */
export function toDepositLookup(cob: CobAnswer): DepositLookup {
  const providerStatus = cob.status;
  switch (cob.status.toUpperCase()) {
    case 'ATIVA':
      return { state: 'pending', providerStatus };
    // A removed charge can no longer be paid, and was not: to the flow that is not paid yet, and
    // its own deadline decides; the status word is kept for the record.
    case 'REMOVIDA_PELO_USUARIO_RECEBEDOR':
    case 'REMOVIDA_PELO_PSP':
      return { state: 'pending', providerStatus };
    case 'CONCLUIDA': {
      const pix = cob.pix?.[0];
      // Paid, but without the Pix nothing can be confirmed or returned: asked again.
      if (!pix) throw unclassified('cob_get', 'pix', cob.pix ?? null);
      return {
        state: 'paid',
        e2eId: pix.endToEndId,
        amountCentavos: centavosOf(pix.valor, 'pix.0.valor', 'cob_get'),
        paidAt: pix.horario,
        providerStatus,
        ...payerOf(pix),
      };
    }
    default:
      throw unclassified('cob_get', 'status', cob.status);
  }
}

const NATURES: Readonly<Record<string, ReturnNature>> = {
  ORIGINAL: 'original',
  RETIRADA: 'withdrawal',
  MED_OPERACIONAL: 'med_operational',
  MED_FRAUDE: 'med_fraud',
  MED_PIX_AUTOMATICO: 'med_automatic',
};

const RETURN_STATES: Readonly<Record<string, PixReturn['state']>> = {
  EM_PROCESSAMENTO: 'processing',
  DEVOLVIDO: 'returned',
  NAO_REALIZADO: 'failed',
};

/** A return (devolução) in pixflow's words. An absent nature is ORIGINAL, as the spec says. */
export function toPixReturn(answer: ReturnAnswer, op = 'return_get'): PixReturn {
  const natureWord = present(answer.natureza)?.toUpperCase() ?? 'ORIGINAL';
  const nature = NATURES[natureWord];
  if (!nature) throw unclassified(op, 'natureza', answer.natureza);
  const state = RETURN_STATES[answer.status.toUpperCase()];
  if (!state) throw unclassified(op, 'status', answer.status);
  const rtrId = present(answer.rtrId);
  const requestedAt = present(answer.horario?.solicitacao);
  const returnedAt = present(answer.horario?.liquidacao);
  const reason = present(answer.motivo);
  return {
    returnId: answer.id,
    amountCentavos: centavosOf(answer.valor, 'valor', op),
    nature,
    state,
    providerStatus: answer.status,
    ...(rtrId ? { rtrId } : {}),
    ...(requestedAt ? { requestedAt } : {}),
    ...(returnedAt ? { returnedAt } : {}),
    ...(reason ? { reason } : {}),
  };
}

/** The return pixflow asks: always ORIGINAL (the receiver's own return of a common Pix). */
export function toReturnRequestBody(request: ReturnRequest): ReturnRequestBody {
  const description = present(request.description);
  return {
    valor: centavosToDecimal(request.amountCentavos),
    natureza: 'ORIGINAL',
    ...(description ? { descricao: description.slice(0, 140) } : {}),
  };
}

/** pixflow's txid behind the Pix's, when the charge was pixflow's. */
function pixflowTxidOf(pix: PixAnswer): string | undefined {
  const txid = present(pix.txid);
  return txid ? fromApiPixTxid(txid) : undefined;
}

/** A received Pix with every return of it so far. */
export function toReceivedPix(pix: PixAnswer, op = 'pix_get'): ReceivedPix {
  const txid = pixflowTxidOf(pix);
  return {
    e2eId: pix.endToEndId,
    amountCentavos: centavosOf(pix.valor, 'valor', op),
    paidAt: pix.horario,
    returns: (pix.devolucoes ?? []).map((d) => toPixReturn(d, op)),
    ...(txid ? { txid } : {}),
    ...payerOf(pix),
  };
}

/** A return a notice carries, or none when its words are not the spec's (see toPixNotification). */
function readableReturn(answer: ReturnAnswer): PixReturn[] {
  try {
    return [toPixReturn(answer, 'webhook')];
  } catch (err) {
    if (err instanceof UnclassifiedAnswerError) return [];
    throw err;
  }
}

/**
 * One Pix of a webhook callback, as a hint. A return whose words pixflow does not know is left
 * out rather than refusing the whole notice (the PSP would send it again and again): the flow
 * asks lookUpReceivedPix, where the same words stop it and an operator is told.
 */
export function toPixNotification(pix: PixAnswer): PixNotification {
  const txid = pixflowTxidOf(pix);
  return {
    e2eId: pix.endToEndId,
    amountCentavos: centavosOf(pix.valor, 'valor', 'webhook'),
    returns: (pix.devolucoes ?? []).flatMap(readableReturn),
    ...(txid ? { txid } : {}),
  };
}
