import type { z } from 'zod';
import type { LivenessCallback, PaymentNotification } from '../types';
import { toLivenessCallback, toPaymentNotification } from './transformers';
import { livenessCallbackSchema, notificationMessageSchema } from './wire/schemas';

// The provider's webhooks, read at the ingress: the message checked against its wire schema, then
// given in pixflow's words. A bad body is the zod error, so the ingress can name the field.

type Read<T> = { success: true; data: T } | { success: false; error: z.ZodError };

/**
 * The liveness callback's payload is not shown in the document (the sandbox's shape is snake
 * case, as the rest of it): a provider's camelCase names are read as the same fields.
 */
const CALLBACK_SPELLINGS: Record<string, string> = {
  transactionId: 'transaction_id',
  correlationId: 'correlation_id',
  statusVerification: 'status_verification',
  statusOnboarding: 'status_onboarding',
  actionType: 'action_type',
  partnerId: 'partner_id',
};

function snakeCased(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const out: Record<string, unknown> = { ...(body as Record<string, unknown>) };
  for (const [camel, snake] of Object.entries(CALLBACK_SPELLINGS)) {
    if (camel in out && !(snake in out)) out[snake] = out[camel];
  }
  return out;
}

export function readPaymentNotification(body: unknown): Read<PaymentNotification> {
  const parsed = notificationMessageSchema.safeParse(body);
  return parsed.success ? { success: true, data: toPaymentNotification(parsed.data) } : parsed;
}

export function readLivenessCallback(body: unknown): Read<LivenessCallback> {
  const parsed = livenessCallbackSchema.safeParse(snakeCased(body));
  return parsed.success ? { success: true, data: toLivenessCallback(parsed.data) } : parsed;
}

/** The merchant id a webhook names (its `partner_id`), read before anything else is trusted. */
export function partnerIdOf(fields: Record<string, unknown>): string {
  const partner = fields.partner_id ?? fields.partnerId;
  return typeof partner === 'string' ? partner : '';
}

/** Which point a body posted to the one-for-all URL is for: its `type`, or a liveness callback's fields. */
export function notificationPointOf(
  body: Record<string, unknown>,
): 'deposit' | 'withdraw' | 'liveness' | undefined {
  if (body.type === 'deposit' || body.type === 'withdraw') return body.type;
  if ('status_verification' in body || 'statusVerification' in body) return 'liveness';
  return undefined;
}
