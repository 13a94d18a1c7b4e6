import { z } from 'zod';
import { type BiometricsState, biometricsStatuses } from '../contracts/biometrics';
import { AT, iso, LATER, livenessLinkSchema } from './schema-parts';

// What the biometric identification route answers.

const biometricsStateSchema = z.object({
  status: z.enum(biometricsStatuses),
  reason: z.string().optional(),
  link: livenessLinkSchema.optional(),
  livenessStatus: z.string().optional(),
  startedAt: iso,
  updatedAt: iso,
  finishedAt: iso.optional(),
}) satisfies z.ZodType<BiometricsState>;

export const biometricsStateViewSchema = biometricsStateSchema
  .extend({ link: livenessLinkSchema.omit({ qrcode: true }).optional() })
  .meta({ id: 'BiometricsState' });
export type BiometricsStateView = z.infer<typeof biometricsStateViewSchema>;

export const biometricsResponseSchema = z
  .object({ workflowId: z.string(), state: biometricsStateViewSchema })
  .meta({
    id: 'BiometricIdentification',
    example: {
      workflowId: 'biometrics-3f2a9c0d5e7b41a8',
      state: {
        status: 'passed',
        link: {
          url: 'https://liveness.example.com/s/7c2d',
          type: 'biometric_identification',
          issuedAt: AT,
          expiresAt: LATER,
        },
        livenessStatus: 'completed',
        startedAt: AT,
        updatedAt: AT,
        finishedAt: AT,
      },
    },
  });
