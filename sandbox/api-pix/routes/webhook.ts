import { type Response, Router } from 'express';
import type { ApiPixContext } from '../context';
import { isoAt } from '../context';
import { faultGate, requireScope } from '../http';
import { sendTyped, violationsOf } from '../problems';
import { webhookSolicitadoSchema } from '../wire';

// PUT /webhook/{chave} (webhook.write), GET /webhook/{chave} (webhook.read), DELETE (webhook.write):
// where the PSP posts the Pix received on one of the account's keys. PUT answers 200 without a
// body (the spec gives it none) and replaces the URL a key had.

const INVALID_WEBHOOK =
  'A presente requisição busca criar um webhook sem respeitar o _schema_ ou, ainda, com sentido semanticamente inválido.';

function knownKey(ctx: ApiPixContext, res: Response, chave: string): boolean {
  if (ctx.options.pixKeys.includes(chave)) return true;
  sendTyped(res, 'WebhookOperacaoInvalida', INVALID_WEBHOOK, [
    {
      razao: 'O parâmetro chave não corresponde a uma chave DICT pertencente a este usuário recebedor.',
      propriedade: 'chave',
      valor: chave,
    },
  ]);
  return false;
}

export function webhookRoutes(ctx: ApiPixContext): Router {
  const router = Router();
  const { state } = ctx;
  router.put(
    '/webhook/:chave',
    faultGate(ctx, 'putWebhook'),
    requireScope(ctx, 'webhook.write'),
    (req, res) => {
      const chave = String(req.params.chave);
      const parsed = webhookSolicitadoSchema.safeParse(req.body ?? {});
      if (!parsed.success) {
        sendTyped(res, 'WebhookOperacaoInvalida', INVALID_WEBHOOK, violationsOf(parsed.error, 'webhook'));
        return;
      }
      if (!knownKey(ctx, res, chave)) return;
      state.webhooks.set(chave, {
        chave,
        webhookUrl: parsed.data.webhookUrl,
        criacao: isoAt(ctx.options.now()),
      });
      res.status(200).send();
    },
  );
  router.get(
    '/webhook/:chave',
    faultGate(ctx, 'getWebhook'),
    requireScope(ctx, 'webhook.read'),
    (req, res) => {
      const chave = String(req.params.chave);
      const hook = state.webhooks.get(chave);
      if (!hook) {
        sendTyped(res, 'WebhookNaoEncontrado', `Nenhum webhook estabelecido para a chave ${chave}.`);
        return;
      }
      res.json({ webhookUrl: hook.webhookUrl, chave: hook.chave, criacao: hook.criacao });
    },
  );
  router.delete(
    '/webhook/:chave',
    faultGate(ctx, 'deleteWebhook'),
    requireScope(ctx, 'webhook.write'),
    (req, res) => {
      const chave = String(req.params.chave);
      if (!state.webhooks.delete(chave)) {
        sendTyped(res, 'WebhookNaoEncontrado', `Nenhum webhook estabelecido para a chave ${chave}.`);
        return;
      }
      res.status(204).send();
    },
  );
  return router;
}
