import { z } from 'zod';

// The contract between pixflow and the operator's eligibility service, which asks the ministry's
// registry of people barred from betting (SIGAP) with the operator's own credentials
// (docs/rules.md, Eligibility). pixflow sends one CPF and why it asks; the service answers whether the
// person may bet. The request is signed as pixflow's webhooks are (Standard Webhooks), so the
// service knows it comes from pixflow. The sandbox emulates the service on this same contract.

/** Why pixflow asks: at sign-up, before taking money, or a periodic look again. */
export const eligibilityPurposes = ['onboarding', 'deposit', 'rescreening'] as const;
export type EligibilityPurpose = (typeof eligibilityPurposes)[number];

/**
 * Why a person is barred: on a social benefit (Bolsa Família, BPC), excluded by their own
 * request, by a court's order, or for a reason the registry names no other way.
 */
export const impededReasons = ['social_benefit', 'self_excluded', 'court_order', 'other'] as const;
export type ImpededReason = (typeof impededReasons)[number];

export const eligibilityRequestSchema = z
  .object({
    cpf: z.string().regex(/^\d{11}$/, 'must be 11 digits'),
    purpose: z.enum(eligibilityPurposes),
    requestedAt: z.iso.datetime(),
  })
  .strict();
export type EligibilityRequest = z.infer<typeof eligibilityRequestSchema>;

export const eligibilityAnswerSchema = z.discriminatedUnion('status', [
  z.object({ status: z.literal('eligible') }),
  z.object({
    status: z.literal('impeded'),
    reason: z.enum(impededReasons),
    /** Until when the bar holds (a self-exclusion's end); absent: until the registry says otherwise. */
    until: z.iso.datetime({ offset: true }).optional(),
  }),
]);
export type EligibilityAnswer = z.infer<typeof eligibilityAnswerSchema>;
