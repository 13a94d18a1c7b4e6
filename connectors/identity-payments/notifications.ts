import type { z } from 'zod';
import type { LivenessCallback, PaymentNotification } from '../types';
import { toLivenessCallback, toPaymentNotification } from './transformers';
import { livenessCallbackSchema, notificationMessageSchema } from './wire/schemas';

// The provider's webhooks, read at the ingress: the message checked against its wire schema, then
// given in pixflow's words. A bad body is the zod error, so the ingress can name the field.

type Read<T> = { success: true; data: T } | { success: false; error: z.ZodError };

export function readPaymentNotification(body: unknown): Read<PaymentNotification> {
  const parsed = notificationMessageSchema.safeParse(body);
  return parsed.success ? { success: true, data: toPaymentNotification(parsed.data) } : parsed;
}

export function readLivenessCallback(body: unknown): Read<LivenessCallback> {
  const parsed = livenessCallbackSchema.safeParse(body);
  return parsed.success ? { success: true, data: toLivenessCallback(parsed.data) } : parsed;
}

/** The merchant id a webhook names (its `partner_id`), read before anything else is trusted. */
export function partnerIdOf(fields: Record<string, unknown>): string {
  return typeof fields.partner_id === 'string' ? fields.partner_id : '';
}

/** Which point a body posted to the one-for-all URL is for: its `type`, or a liveness callback's fields. */
export function notificationPointOf(
  body: Record<string, unknown>,
): 'deposit' | 'withdraw' | 'liveness' | undefined {
  if (body.type === 'deposit' || body.type === 'withdraw') return body.type;
  if ('status_verification' in body) return 'liveness';
  return undefined;
}
