import { z } from 'zod';
import type { FlowTimings } from './flow';
import { cpfSchema, kycPlanSchema } from './flow-input';

// What a biometric identification is started with, as the API checks it.

export const biometricsInputSchema = z.object({
  cpf: cpfSchema,
  plan: kycPlanSchema,
  event: z.string().min(1).max(100),
});
export type BiometricsInput = z.infer<typeof biometricsInputSchema> & { timings?: Partial<FlowTimings> };
