import { z } from 'zod';
import { pixTypeSchema } from './flow-input';

// The contract between pixflow and the operator's own backend, asked before each payout is sent
// when PAYOUT_AUTHORIZATION_URL is set (docs/payout-controls.md): this is where the operator's
// wallet balance and its own rules decide. The request is signed as pixflow's webhooks are
// (Standard Webhooks), so the backend knows it comes from pixflow. It names the person by the
// masked CPF and the keyed hash the events carry, never by the whole CPF.

export const payoutAuthorizationRequestSchema = z
  .object({
    transactionId: z.string(),
    merchant: z.string(),
    amountCentavos: z.number().int().positive(),
    cpfMasked: z.string().meta({ description: "the person's CPF, masked: ***.456.789-**" }),
    cpfHash: z.string().meta({ description: "keyed hash of the person's CPF, as the events carry it" }),
    payee: z.object({ keyType: pixTypeSchema, keyMasked: z.string() }),
    requestedBy: z
      .string()
      .optional()
      .meta({ description: 'a manual payout: the operator who asked for it' }),
    approvedBy: z
      .array(z.string())
      .optional()
      .meta({ description: 'a large payout: the operators who approved it (four eyes)' }),
    requestedAt: z.iso.datetime(),
  })
  .strict()
  .meta({ id: 'PayoutAuthorizationRequest' });
export type PayoutAuthorizationRequest = z.infer<typeof payoutAuthorizationRequestSchema>;

/** The backend's answer (HTTP 200, JSON): anything else is no answer. */
export const payoutAuthorizationAnswerSchema = z
  .discriminatedUnion('decision', [
    z.object({ decision: z.literal('approve') }),
    z.object({ decision: z.literal('deny'), reason: z.string().trim().min(1).max(500) }),
  ])
  .meta({ id: 'PayoutAuthorizationAnswer' });
export type PayoutAuthorizationAnswer = z.infer<typeof payoutAuthorizationAnswerSchema>;

/**
 * What the withdrawal learns: approved, denied with the backend's reason, or no valid answer,
 * which the rules policy's `payouts.authorizationOnNoAnswer` turns into a send (`approve`) or a refusal (`deny`).
 */
export type PayoutAuthorization =
  | { outcome: 'approved' }
  | { outcome: 'denied'; reason: string }
  | { outcome: 'unanswered'; send: boolean; problem: string };
