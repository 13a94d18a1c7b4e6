import type { ApiPixContext } from './context';
import { isoAt } from './context';
import { takeReturnFailure } from './faults';
import { returnId } from './ids';
import type { PixRecord, ReturnRecord } from './state';
import type { Natureza } from './wire';

// A return (devolução) of a received Pix, asked by the receiver or started by the payer's side
// (MED): EM_PROCESSAMENTO at once with its rtrId, then after `returnSettleMs` DEVOLVIDO, or
// NAO_REALIZADO with a motivo when `failReturnsNext` says so. Its final state is webhooked.

export interface NewReturn {
  id: string;
  amountCentavos: number;
  natureza: Natureza;
  descricao?: string | undefined;
  fingerprint: string;
}

export function startReturn(ctx: ApiPixContext, pix: PixRecord, asked: NewReturn): ReturnRecord {
  const now = ctx.options.now();
  const record: ReturnRecord = {
    id: asked.id,
    rtrId: returnId(ctx.options.ispb, now),
    amountCentavos: asked.amountCentavos,
    natureza: asked.natureza,
    ...(asked.descricao === undefined ? {} : { descricao: asked.descricao }),
    solicitacao: isoAt(now),
    status: 'EM_PROCESSAMENTO',
    fingerprint: asked.fingerprint,
  };
  pix.returns.push(record);
  // Decided when asked, so a test knows which return the knob takes.
  const failure = takeReturnFailure(ctx.state.faults);
  ctx.timers.set(() => {
    const at = isoAt(ctx.options.now());
    if (failure === undefined) {
      record.status = 'DEVOLVIDO';
      record.liquidacao = at;
    } else {
      record.status = 'NAO_REALIZADO';
      record.motivo = failure;
    }
    ctx.notifier.notify(pix);
  }, ctx.options.returnSettleMs);
  return record;
}
