import { type Response, Router } from 'express';
import { z } from 'zod';
import { decimalTextToCentavos } from '../../../common/money';
import type { ApiPixContext } from '../context';
import { isoAt } from '../context';
import { applyFaultsPatch, defaultFaults, faultsPatchSchema } from '../faults';
import { endToEndId, randomCpf } from '../ids';
import { sendProblem } from '../problems';
import { startReturn } from '../returns';
import { type PixRecord, resetApiPixState, returnableCentavos } from '../state';
import { cobView, devolucaoView, pixView } from '../views';
import { cobExpired } from './cob';

// Control endpoints under /sandbox, on the same mutual-TLS listener but without OAuth: not part
// of the API Pix. The payer's bank (pay a cob, start a MED return), faults, reset and state.

const payerName = z.string().min(1).max(200);
const paySchema = z
  .object({
    /** `holder`: the cob's devedor pays; `third_party`: someone else (their CPF and name). */
    payer: z.enum(['holder', 'third_party']).default('holder'),
    cpf: z
      .string()
      .regex(/^\d{11}$/, 'must be 11 digits')
      .optional(),
    nome: payerName.optional(),
    infoPagador: z.string().max(140).optional(),
  })
  .strict()
  .refine((b) => b.payer === 'third_party' || (b.cpf === undefined && b.nome === undefined), {
    path: ['cpf'],
    message: 'the holder pays as the cob names them: give cpf and nome only for a third party',
  });

const medSchema = z
  .object({
    natureza: z.enum(['MED_OPERACIONAL', 'MED_FRAUDE']),
    /** Default: all the Pix still holds. */
    valor: z
      .string()
      .regex(/^\d{1,10}\.\d{2}$/, 'must be like 10.00')
      .optional(),
  })
  .strict();

function refuse(res: Response, status: number, detail: string, field?: string): void {
  sendProblem(res, {
    type: 'about:blank',
    title: status === 404 ? 'Not Found' : status === 409 ? 'Conflict' : 'Bad Request',
    status,
    detail,
    ...(field ? { violacoes: [{ razao: detail, propriedade: field }] } : {}),
  });
}

function parse<T>(schema: z.ZodType<T>, body: unknown, res: Response): T | undefined {
  const parsed = schema.safeParse(body ?? {});
  if (parsed.success) return parsed.data;
  sendProblem(res, {
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    detail: parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '),
    violacoes: parsed.error.issues.map((i) => ({
      razao: i.message,
      propriedade: i.path.join('.') || 'body',
    })),
  });
  return undefined;
}

/** The payer's bank: pay a cob (the holder or a third party), start a MED return. */
function payerRoutes(ctx: ApiPixContext): Router {
  const router = Router();
  const { state, options } = ctx;

  router.post('/sandbox/cob/:txid/pay', (req, res) => {
    const body = parse(paySchema, req.body, res);
    if (!body) return;
    const cob = state.cobs.get(String(req.params.txid));
    if (!cob) return refuse(res, 404, 'no cob with this txid');
    if (cob.status !== 'ATIVA') return refuse(res, 409, `the cob is ${cob.status}`);
    if (cobExpired(ctx, cob)) return refuse(res, 409, 'the cob has expired');
    const devedor = cob.request.devedor;
    let pagador: PixRecord['pagador'];
    if (body.payer === 'holder') {
      if (!devedor) return refuse(res, 409, 'the cob names no devedor: pay it as a third_party', 'payer');
      pagador = devedor;
    } else {
      const holderCpf = devedor && 'cpf' in devedor ? devedor.cpf : undefined;
      let cpf = body.cpf ?? randomCpf();
      if (body.cpf === undefined) while (cpf === holderCpf) cpf = randomCpf();
      if (cpf === holderCpf)
        return refuse(res, 400, 'a third party pays with another CPF than the devedor', 'cpf');
      pagador = { cpf, nome: body.nome ?? 'Pagador Terceiro' };
    }
    const now = options.now();
    const pix: PixRecord = {
      e2eId: endToEndId(options.payerIspb, now),
      txid: cob.txid,
      amountCentavos: cob.amountCentavos,
      chave: cob.request.chave,
      horario: isoAt(now),
      horarioMs: now,
      ...(body.infoPagador === undefined ? {} : { infoPagador: body.infoPagador }),
      pagador,
      returns: [],
    };
    state.pix.set(pix.e2eId, pix);
    cob.e2eIds.push(pix.e2eId);
    cob.status = 'CONCLUIDA';
    ctx.notifier.notify(pix);
    res.json(pixView(pix));
  });

  router.post('/sandbox/pix/:e2eid/med', (req, res) => {
    const body = parse(medSchema, req.body, res);
    if (!body) return;
    const pix = state.pix.get(String(req.params.e2eid));
    if (!pix) return refuse(res, 404, 'no Pix with this e2eid');
    const remaining = returnableCentavos(pix);
    const amountCentavos = body.valor === undefined ? remaining : (decimalTextToCentavos(body.valor) ?? 0);
    if (remaining === 0) return refuse(res, 409, 'the Pix has nothing left to return');
    if (amountCentavos <= 0 || amountCentavos > remaining)
      return refuse(res, 400, 'valor must be more than zero and at most what the Pix still holds', 'valor');
    const id = `MED${pix.returns.length + 1}${pix.e2eId.slice(-12)}`;
    const record = startReturn(ctx, pix, {
      id,
      amountCentavos,
      natureza: body.natureza,
      fingerprint: JSON.stringify({ natureza: body.natureza, valor: body.valor }),
    });
    res.json(devolucaoView(record));
  });
  return router;
}

/** Trouble on demand, and everything the PSP holds: to read (tests) or to forget at once. */
function faultAndStateRoutes(ctx: ApiPixContext): Router {
  const router = Router();
  const { state } = ctx;
  router.post('/sandbox/tokens/revoke', (_req, res) => {
    const revoked = state.tokens.size;
    state.tokens.clear();
    res.json({ revoked });
  });
  router.get('/sandbox/faults', (_req, res) => {
    res.json(state.faults);
  });
  router.post('/sandbox/faults', (req, res) => {
    const body = parse(faultsPatchSchema, req.body, res);
    if (!body) return;
    state.faults = applyFaultsPatch(state.faults, body);
    res.json(state.faults);
  });
  router.delete('/sandbox/faults', (_req, res) => {
    state.faults = defaultFaults();
    res.json(state.faults);
  });
  router.post('/sandbox/reset', (_req, res) => {
    ctx.timers.clearAll();
    resetApiPixState(state);
    res.json({ ok: true });
  });
  router.get('/sandbox/state', (_req, res) => {
    res.json({
      counters: state.counters,
      tokensActive: state.tokens.size,
      faults: state.faults,
      cobs: [...state.cobs.values()].map((c) => cobView(c, state)),
      pix: [...state.pix.values()].map(pixView),
      returns: [...state.pix.values()].flatMap((p) =>
        p.returns.map((r) => ({ endToEndId: p.e2eId, ...devolucaoView(r) })),
      ),
      webhooks: [...state.webhooks.values()],
      deliveries: state.deliveries,
    });
  });
  return router;
}

export function controlRoutes(ctx: ApiPixContext): Router {
  return Router().use(payerRoutes(ctx), faultAndStateRoutes(ctx));
}
