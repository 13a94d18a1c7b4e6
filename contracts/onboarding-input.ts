import { z } from 'zod';
import type { FlowTimings } from './flow';
import { cpfSchema, kycPlanSchema } from './flow-input';

// What an onboarding is started with and what an operator decides, as the API checks them.

export const onboardingInputSchema = z.object({
  cpf: cpfSchema,
  plan: kycPlanSchema,
  event: z.string().min(1).max(100),
  redirectUrl: z
    .string()
    .max(500)
    // A URL path is ASCII (RFC 3986: anything else is percent-encoded), so no control character,
    // space or lone surrogate either.
    .regex(/^\/(?!\/)[\x21-\x7e]*$/, 'must be a path starting with a single "/"')
    .optional(),
  userRef: z.string().min(1).max(200).optional(),
});
export type OnboardingInput = z.infer<typeof onboardingInputSchema> & { timings?: Partial<FlowTimings> };

export const reviewDecisionSchema = z.object({
  decision: z.enum(['approve', 'refuse']),
  by: z.string().min(1).max(200),
  reason: z.string().min(1).max(1000),
});
export type ReviewDecision = z.infer<typeof reviewDecisionSchema>;
