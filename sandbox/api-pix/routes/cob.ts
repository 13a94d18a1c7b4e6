import { randomUUID } from 'node:crypto';
import { type Request, type Response, Router } from 'express';
import { createDynamicPix, hasError } from 'pix-utils';
import { decimalTextToCentavos } from '../../../common/money';
import type { ApiPixContext } from '../context';
import { isoAt } from '../context';
import { faultGate, requireScope } from '../http';
import { sendTyped, type Violacao, violationsOf } from '../problems';
import type { CobRecord } from '../state';
import { cobView } from '../views';
import { type CobSolicitada, cobSolicitadaSchema, TXID } from '../wire';

// PUT /cob/{txid} (cob.write) and GET /cob/{txid} (cob.read): immediate charges.
//
// This PSP's reading where the spec leaves room: the same txid with the same request answers the
// cob it made (200, so a retried PUT is safe); with another request it is CobOperacaoInvalida,
// whatever the cob's status (the spec refuses changing a cob no longer ATIVA; PATCH is how an
// ATIVA one is revised, and this PSP keeps no revisions, so `revisao` is always 0). A cob past
// its `expiracao` stays ATIVA (the status is the record's, not the charge's, as the spec says)
// but can no longer be paid. No locations are kept: a request naming `loc` is refused.

const INVALID_COB =
  'A requisição que busca alterar ou criar uma cobrança para pagamento imediato não respeita o _schema_ ou está semanticamente errada.';

function txidOk(res: Response, txid: string, type: 'CobOperacaoInvalida' | 'CobConsultaInvalida'): boolean {
  if (TXID.test(txid)) return true;
  sendTyped(res, type, 'O txid não respeita o _schema_.', [
    { razao: 'O campo txid não respeita o _schema_ [a-zA-Z0-9]{26,35}.', propriedade: 'txid', valor: txid },
  ]);
  return false;
}

function newCob(
  ctx: ApiPixContext,
  req: Request,
  txid: string,
  request: CobSolicitada,
): CobRecord | Violacao[] {
  const violations: Violacao[] = [];
  const amountCentavos = decimalTextToCentavos(request.valor.original) ?? 0;
  if (amountCentavos === 0 && request.valor.modalidadeAlteracao !== 1)
    violations.push({ razao: 'O campo cob.valor.original é zero.', propriedade: 'cob.valor.original' });
  if (!ctx.options.pixKeys.includes(request.chave))
    violations.push({
      razao: 'O campo cob.chave corresponde a uma conta que não pertence a este usuário recebedor.',
      propriedade: 'cob.chave',
      valor: request.chave,
    });
  if (request.loc !== undefined)
    violations.push({ razao: 'O location referenciado por cob.loc.id inexiste.', propriedade: 'cob.loc.id' });
  if (violations.length > 0) return violations;
  const now = ctx.options.now();
  const locId = ctx.state.nextLocId++;
  const location = `${req.get('host') ?? 'localhost'}/qr/v2/${randomUUID().replace(/-/g, '')}`;
  const brCode = createDynamicPix({
    merchantName: ctx.options.merchantName.slice(0, 25),
    merchantCity: ctx.options.merchantCity.slice(0, 15),
    url: location,
  });
  if (hasError(brCode)) throw new Error(`BR Code: ${brCode.message}`);
  return {
    txid,
    fingerprint: JSON.stringify(request),
    request,
    amountCentavos,
    expiracaoS: request.calendario.expiracao ?? ctx.options.cobExpiryDefaultS,
    criacao: isoAt(now),
    createdAtMs: now,
    locId,
    location,
    pixCopiaECola: brCode.toBRCode(),
    status: 'ATIVA',
    e2eIds: [],
  };
}

export function cobExpired(ctx: ApiPixContext, cob: CobRecord): boolean {
  return ctx.options.now() >= cob.createdAtMs + cob.expiracaoS * 1000;
}

export function cobRoutes(ctx: ApiPixContext): Router {
  const router = Router();
  router.put('/cob/:txid', faultGate(ctx, 'putCob'), requireScope(ctx, 'cob.write'), (req, res) => {
    const txid = String(req.params.txid);
    if (!txidOk(res, txid, 'CobOperacaoInvalida')) return;
    const parsed = cobSolicitadaSchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      sendTyped(res, 'CobOperacaoInvalida', INVALID_COB, violationsOf(parsed.error, 'cob'));
      return;
    }
    const fingerprint = JSON.stringify(parsed.data);
    const existing = ctx.state.cobs.get(txid);
    if (existing) {
      if (existing.fingerprint === fingerprint) {
        res.status(200).json(cobView(existing));
        return;
      }
      const razao =
        existing.status === 'ATIVA'
          ? 'Já existe uma cobrança com este txid, com outros dados.'
          : 'A cobrança já existe, não está no status ATIVA, e a presente requisição busca alterá-la.';
      sendTyped(res, 'CobOperacaoInvalida', INVALID_COB, [{ razao, propriedade: 'txid', valor: txid }]);
      return;
    }
    const made = newCob(ctx, req, txid, parsed.data);
    if (Array.isArray(made)) {
      sendTyped(res, 'CobOperacaoInvalida', INVALID_COB, made);
      return;
    }
    ctx.state.cobs.set(txid, made);
    res.status(201).json(cobView(made));
  });

  router.get('/cob/:txid', faultGate(ctx, 'getCob'), requireScope(ctx, 'cob.read'), (req, res) => {
    const txid = String(req.params.txid);
    if (!txidOk(res, txid, 'CobConsultaInvalida')) return;
    const revisao = req.query.revisao;
    if (revisao !== undefined && revisao !== '0') {
      const razao = 'O parâmetro revisao corresponde a uma revisão inexistente para a cobrança.';
      sendTyped(res, 'CobConsultaInvalida', 'Revisão inexistente.', [
        { razao, propriedade: 'revisao', valor: String(revisao) },
      ]);
      return;
    }
    const cob = ctx.state.cobs.get(txid);
    if (!cob) {
      sendTyped(res, 'CobNaoEncontrado', `Cobrança não encontrada para o txid ${txid}.`);
      return;
    }
    res.json(cobView(cob, ctx.state));
  });
  return router;
}
