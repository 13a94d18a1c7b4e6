import { centavosToDecimal } from '../../common/money';
import type { ApiPixState, CobRecord, PixRecord, ReturnRecord } from './state';
import type { Cob, Devolucao, Pix } from './wire';

// The wire's answers from what the PSP holds.

export function devolucaoView(r: ReturnRecord): Devolucao {
  return {
    id: r.id,
    rtrId: r.rtrId,
    valor: centavosToDecimal(r.amountCentavos),
    natureza: r.natureza,
    ...(r.descricao === undefined ? {} : { descricao: r.descricao }),
    horario: {
      solicitacao: r.solicitacao,
      ...(r.liquidacao === undefined ? {} : { liquidacao: r.liquidacao }),
    },
    status: r.status,
    ...(r.motivo === undefined ? {} : { motivo: r.motivo }),
  };
}

export function pixView(p: PixRecord): Pix {
  const valor = centavosToDecimal(p.amountCentavos);
  return {
    endToEndId: p.e2eId,
    ...(p.txid === undefined ? {} : { txid: p.txid }),
    valor,
    componentesValor: { original: { valor } },
    chave: p.chave,
    horario: p.horario,
    ...(p.infoPagador === undefined ? {} : { infoPagador: p.infoPagador }),
    pagador: p.pagador,
    ...(p.returns.length > 0 ? { devolucoes: p.returns.map(devolucaoView) } : {}),
  };
}

/** CobGerada; with `pix` (CobCompleta) when `state` is given and the cob was paid. */
export function cobView(c: CobRecord, state?: ApiPixState): Cob {
  const { request } = c;
  const paid = state ? c.e2eIds.flatMap((id) => state.pix.get(id) ?? []) : [];
  return {
    calendario: { criacao: c.criacao, expiracao: c.expiracaoS },
    txid: c.txid,
    revisao: 0,
    loc: { id: c.locId, location: c.location, tipoCob: 'cob', criacao: c.criacao },
    location: c.location,
    status: c.status,
    ...(request.devedor === undefined ? {} : { devedor: request.devedor }),
    valor: request.valor,
    chave: request.chave,
    ...(request.solicitacaoPagador === undefined ? {} : { solicitacaoPagador: request.solicitacaoPagador }),
    ...(request.infoAdicionais === undefined ? {} : { infoAdicionais: request.infoAdicionais }),
    pixCopiaECola: c.pixCopiaECola,
    ...(paid.length > 0 ? { pix: paid.map(pixView) } : {}),
  };
}
