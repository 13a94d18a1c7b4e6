import { type RequestHandler, type Response, Router } from 'express';
import { decimalTextToCentavos } from '../../../common/money';
import type { ApiPixContext } from '../context';
import { faultGate, requireScope } from '../http';
import { sendTyped, type Violacao, violationsOf } from '../problems';
import { startReturn } from '../returns';
import { type PixRecord, returnableCentavos } from '../state';
import { devolucaoView, pixView } from '../views';
import {
  type DevolucaoSolicitada,
  devolucaoSolicitadaSchema,
  E2E_ID,
  pixQuerySchema,
  RETURN_ID,
} from '../wire';

// GET /pix/{e2eid}, GET /pix (pix.read); PUT /pix/{e2eid}/devolucao/{id} (pix.write) and
// GET /pix/{e2eid}/devolucao/{id} (pix.read): received Pix and their returns.
//
// A return's `id` is the receiver's: the same id with the same request answers the return
// already asked (201 again, whatever its status now), with another request it is
// PixDevolucaoInvalida (the spec's "id já utilizado"). Returns not refused count against the
// Pix's value; one past 90 days of the Pix is refused, as the spec says.

const INVALID_RETURN =
  'A presente requisição de devolução não respeita o _schema_ ou não faz sentido semanticamente.';
const RETURN_WINDOW_MS = 90 * 24 * 3600 * 1000;

function pathOk(res: Response, e2eid: string, id?: string): boolean {
  const violations: Violacao[] = [];
  if (!E2E_ID.test(e2eid))
    violations.push({
      razao: 'O e2eid não respeita o _schema_ [a-zA-Z0-9]{32}.',
      propriedade: 'e2eid',
      valor: e2eid,
    });
  if (id !== undefined && !RETURN_ID.test(id))
    violations.push({
      razao: 'O id não respeita o _schema_ [a-zA-Z0-9]{1,35}.',
      propriedade: 'id',
      valor: id,
    });
  if (violations.length === 0) return true;
  sendTyped(res, 'RequisicaoInvalida', 'Parâmetros de caminho inválidos.', violations);
  return false;
}

function matches(pix: PixRecord, q: ReturnType<typeof pixQuerySchema.parse>): boolean {
  const at = pix.horarioMs;
  if (at < Date.parse(q.inicio) || at > Date.parse(q.fim)) return false;
  if (q.txid !== undefined && pix.txid !== q.txid) return false;
  if (q.txIdPresente !== undefined && (pix.txid !== undefined) !== (q.txIdPresente === 'true')) return false;
  if (q.devolucaoPresente !== undefined && pix.returns.length > 0 !== (q.devolucaoPresente === 'true'))
    return false;
  if (q.cpf !== undefined && (!('cpf' in pix.pagador) || pix.pagador.cpf !== q.cpf)) return false;
  if (q.cnpj !== undefined && (!('cnpj' in pix.pagador) || pix.pagador.cnpj !== q.cnpj)) return false;
  return true;
}

function listPix(ctx: ApiPixContext): RequestHandler {
  return (req, res) => {
    const parsed = pixQuerySchema.safeParse(req.query);
    if (!parsed.success) {
      const detail = 'Os parâmetros da consulta não respeitam o _schema_.';
      sendTyped(res, 'PixConsultaInvalida', detail, violationsOf(parsed.error, ''));
      return;
    }
    const q = parsed.data;
    const page = q['paginacao.paginaAtual'];
    const size = q['paginacao.itensPorPagina'];
    const found = [...ctx.state.pix.values()]
      .filter((p) => matches(p, q))
      .sort((a, b) => a.horarioMs - b.horarioMs);
    const { 'paginacao.paginaAtual': _p, 'paginacao.itensPorPagina': _s, ...filters } = q;
    res.json({
      parametros: {
        ...filters,
        paginacao: {
          paginaAtual: page,
          itensPorPagina: size,
          quantidadeDePaginas: Math.max(1, Math.ceil(found.length / size)),
          quantidadeTotalDeItens: found.length,
        },
      },
      pix: found.slice(page * size, (page + 1) * size).map(pixView),
    });
  };
}

/** What is wrong with a new return of `pix` (none: it may be asked). */
function returnViolations(ctx: ApiPixContext, pix: PixRecord, asked: DevolucaoSolicitada): Violacao[] {
  const amountCentavos = decimalTextToCentavos(asked.valor) ?? 0;
  const violations: Violacao[] = [];
  if (amountCentavos === 0)
    violations.push({
      razao: 'O campo devolucao.valor é zero.',
      propriedade: 'devolucao.valor',
      valor: asked.valor,
    });
  else if (amountCentavos > returnableCentavos(pix))
    violations.push({
      razao:
        'A presente requisição de devolução, em conjunto com as demais devoluções, excederia o valor do pix originário.',
      propriedade: 'devolucao.valor',
      valor: asked.valor,
    });
  if (asked.natureza === 'RETIRADA')
    violations.push({
      razao: 'O Pix não é um Pix Saque nem Pix Troco: a natureza deve ser ORIGINAL.',
      propriedade: 'devolucao.natureza',
      valor: asked.natureza,
    });
  if (ctx.options.now() - pix.horarioMs > RETURN_WINDOW_MS)
    violations.push({
      razao: 'A devolução viola a janela de 90 dias desde a liquidação do pix.',
      propriedade: 'e2eid',
      valor: pix.e2eId,
    });
  return violations;
}

function putDevolucao(ctx: ApiPixContext): RequestHandler {
  return (req, res) => {
    const e2eid = String(req.params.e2eid);
    const id = String(req.params.id);
    if (!pathOk(res, e2eid, id)) return;
    const parsed = devolucaoSolicitadaSchema.safeParse(req.body ?? {});
    if (!parsed.success) {
      sendTyped(res, 'PixDevolucaoInvalida', INVALID_RETURN, violationsOf(parsed.error, 'devolucao'));
      return;
    }
    const pix = ctx.state.pix.get(e2eid);
    if (!pix) {
      sendTyped(res, 'PixNaoEncontrado', `Pix não encontrado para o e2eid ${e2eid}.`);
      return;
    }
    const asked = { ...parsed.data, natureza: parsed.data.natureza ?? 'ORIGINAL' };
    const fingerprint = JSON.stringify(asked);
    const existing = pix.returns.find((r) => r.id === id);
    if (existing?.fingerprint === fingerprint) {
      res.status(201).json(devolucaoView(existing));
      return;
    }
    const violations = existing
      ? [
          {
            razao:
              'A presente requisição de devolução apresenta um id já utilizado por outra requisição de devolução para este e2eid.',
            propriedade: 'id',
            valor: id,
          },
        ]
      : returnViolations(ctx, pix, asked);
    if (violations.length > 0) {
      sendTyped(res, 'PixDevolucaoInvalida', INVALID_RETURN, violations);
      return;
    }
    const record = startReturn(ctx, pix, {
      id,
      amountCentavos: decimalTextToCentavos(asked.valor) ?? 0,
      natureza: asked.natureza,
      descricao: asked.descricao,
      fingerprint,
    });
    res.status(201).json(devolucaoView(record));
  };
}

export function pixRoutes(ctx: ApiPixContext): Router {
  const router = Router();
  const { state } = ctx;
  router.get('/pix', faultGate(ctx, 'listPix'), requireScope(ctx, 'pix.read'), listPix(ctx));
  router.get('/pix/:e2eid', faultGate(ctx, 'getPix'), requireScope(ctx, 'pix.read'), (req, res) => {
    const e2eid = String(req.params.e2eid);
    if (!pathOk(res, e2eid)) return;
    const pix = state.pix.get(e2eid);
    if (!pix) {
      sendTyped(res, 'PixNaoEncontrado', `Pix não encontrado para o e2eid ${e2eid}.`);
      return;
    }
    res.json(pixView(pix));
  });
  router.put(
    '/pix/:e2eid/devolucao/:id',
    faultGate(ctx, 'putDevolucao'),
    requireScope(ctx, 'pix.write'),
    putDevolucao(ctx),
  );
  router.get(
    '/pix/:e2eid/devolucao/:id',
    faultGate(ctx, 'getDevolucao'),
    requireScope(ctx, 'pix.read'),
    (req, res) => {
      const e2eid = String(req.params.e2eid);
      const id = String(req.params.id);
      if (!pathOk(res, e2eid, id)) return;
      const found = state.pix.get(e2eid)?.returns.find((r) => r.id === id);
      if (!found) {
        sendTyped(res, 'PixDevolucaoNaoEncontrada', `Devolução ${id} não encontrada para o e2eid ${e2eid}.`);
        return;
      }
      res.json(devolucaoView(found));
    },
  );
  return router;
}
