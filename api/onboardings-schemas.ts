import { z } from 'zod';
import { type OnboardingState, onboardingStatuses } from '../contracts/onboarding';
import { reviewDecisionSchema } from '../contracts/onboarding-input';
import { onboardingRequestSchema } from '../starters/requests';
import { AT, CPF, iso, LATER, livenessLinkSchema } from './schema-parts';

// What the onboarding routes take and answer.

export const onboardingBodySchema = onboardingRequestSchema.meta({
  id: 'OnboardingRequest',
  example: { cpf: CPF, plan: 'plan_basic', event: 'signup', redirectUrl: '/welcome', userRef: 'user-4711' },
});
export const reviewBodySchema = reviewDecisionSchema.meta({
  id: 'ReviewDecision',
  example: { decision: 'approve', by: 'ops@example.com', reason: 'document checked by hand' },
});

const livenessLinkViewSchema = livenessLinkSchema.omit({ qrcode: true }).extend({
  qrcodeUrl: z
    .string()
    .meta({ description: "the link's QR code as PNG: GET /v1/onboardings/{cpf}/liveness-link/qrcode.png" }),
});

const reviewSchema = reviewDecisionSchema;

const onboardingStateSchema = z.object({
  status: z.enum(onboardingStatuses),
  reasons: z.array(z.string()),
  flags: z.object({ pep: z.boolean() }),
  link: livenessLinkSchema.optional(),
  livenessStatus: z.string().optional(),
  review: reviewSchema.optional(),
  startedAt: iso,
  updatedAt: iso,
  finishedAt: iso.optional(),
}) satisfies z.ZodType<OnboardingState>;

export const onboardingStateViewSchema = onboardingStateSchema
  .extend({ link: livenessLinkViewSchema.optional() })
  .meta({ id: 'OnboardingState' });
export type OnboardingStateView = z.infer<typeof onboardingStateViewSchema>;

export const onboardingResponseSchema = z
  .object({ workflowId: z.string(), state: onboardingStateViewSchema })
  .meta({
    id: 'Onboarding',
    example: {
      workflowId: 'onboarding-3f2a9c0d5e7b41a8',
      state: {
        status: 'awaiting_liveness',
        reasons: [],
        flags: { pep: false },
        link: {
          url: 'https://liveness.example.com/s/9b1e',
          qrcodeUrl: `/v1/onboardings/${CPF}/liveness-link/qrcode.png`,
          type: 'onboarding',
          issuedAt: AT,
          expiresAt: LATER,
        },
        startedAt: AT,
        updatedAt: AT,
      },
    },
  });

export const livenessLinkResponseSchema = livenessLinkSchema
  .extend({
    workflowId: z.string().meta({
      description:
        'the flow that holds the link: the onboarding, or once it is approved the biometric identification (`type` biometric_identification)',
    }),
    reused: z.boolean().meta({
      description:
        'true: an earlier ask was already answered with this link; false: it is new to the caller (the first ask, or a link the provider just issued)',
    }),
  })
  .meta({
    id: 'LivenessLink',
    example: {
      url: 'https://liveness.example.com/s/9b1e',
      qrcode: 'data:image/png;base64,iVBORw0KGgo=',
      type: 'onboarding',
      issuedAt: AT,
      expiresAt: LATER,
      reused: true,
      workflowId: 'onboarding-3f2a9c0d5e7b41a8',
    },
  });

export const reviewAcceptedSchema = reviewDecisionSchema.extend({ workflowId: z.string() }).meta({
  id: 'ReviewAccepted',
  description: 'The decision as delivered to the flow',
  example: {
    workflowId: 'onboarding-3f2a9c0d5e7b41a8',
    decision: 'approve',
    by: 'ops@example.com',
    reason: 'document checked by hand',
  },
});
