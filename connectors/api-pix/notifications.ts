import type { PixNotification } from '../types';
import { toPixNotification } from './transformers';
import { webhookCallbackSchema } from './wire/schemas';

// The PSP's Pix webhook (`POST {webhookUrl}/pix`, body `{ pix: [...] }`), read at the ingress into
// pixflow's words. It comes for a Pix received against a charge and for a return that reached
// DEVOLVIDO or NAO_REALIZADO; each is a hint the flow confirms with the connector.

/** The notice's Pix in pixflow's words; a body that is not the spec's shape throws, naming the field. */
export function readPixNotifications(body: unknown): PixNotification[] {
  const parsed = webhookCallbackSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = issue?.path.map(String).join('.') || '(body)';
    throw new TypeError(`not an API Pix webhook body: ${path}: ${issue?.message ?? 'invalid'}`);
  }
  return parsed.data.pix.map(toPixNotification);
}
