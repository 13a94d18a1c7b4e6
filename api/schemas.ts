import { z } from 'zod';
import type { DepositQr, DepositState } from '../contracts/deposit';
import { depositInputSchema } from '../contracts/deposit-input';
import type { LivenessLink, OnboardingState } from '../contracts/onboarding';
import { onboardingInputSchema, reviewDecisionSchema } from '../contracts/onboarding-input';
import { cpfSchema, txidSchema } from '../contracts/shared-input';
import type { WithdrawalState } from '../contracts/withdrawal';
import { transactionIdSchema, withdrawalInputSchema } from '../contracts/withdrawal-input';

// The API's request and response shapes. Requests reuse the flows' input schemas (one source of
// truth for validation and for /openapi.json); responses mirror the workflow state types and are
// checked against them at compile time with `satisfies`.

// Every request and answer carries an example (`.meta({ example })`): the API reference shows
// them, and test/unit/openapi-examples.test.ts parses each with its own schema.

const CPF = '63401825771';
const AT = '2026-11-21T14:03:00.000Z';
const LATER = '2026-11-21T14:33:00.000Z';
const TXID = '47110815000000000000000000000001';
const client = { externalId: 'user-4711', cpf: CPF, email: 'ana@example.com', name: 'Ana Souza' };

// ------------------------------------------------------------------------- requests

export const onboardingBodySchema = onboardingInputSchema.meta({
  id: 'OnboardingRequest',
  example: { cpf: CPF, plan: 'plan_basic', event: 'signup', redirectUrl: '/welcome', userRef: 'user-4711' },
});
export const reviewBodySchema = reviewDecisionSchema.meta({
  id: 'ReviewDecision',
  example: { decision: 'approve', by: 'ops@example.com', reason: 'document checked by hand' },
});

/** txid and merchant may be left out: the API generates a txid and uses the configured merchant. */
export const depositBodySchema = depositInputSchema
  .extend({
    txid: txidSchema.optional().meta({ description: 'digits only; generated when absent' }),
    merchant: depositInputSchema.shape.merchant
      .optional()
      .meta({ description: 'default: the configured merchant' }),
  })
  .meta({
    id: 'DepositRequest',
    example: { txid: TXID, client: { ...client, birthday: '1990-01-02' }, amountCentavos: 15_000 },
  });

/**
 * withdrawalInputSchema carries a refinement (pix key vs type), which zod does not let us extend:
 * this is its shape with the two optional fields; the route then parses the filled-in body with
 * withdrawalInputSchema itself, so the key check runs and names the same fields.
 */
export const withdrawalBodySchema = z
  .object({
    ...withdrawalInputSchema.shape,
    transactionId: transactionIdSchema
      .optional()
      .meta({ description: 'idempotency key; generated when absent' }),
    merchant: withdrawalInputSchema.shape.merchant
      .optional()
      .meta({ description: 'default: the configured merchant' }),
  })
  .meta({
    id: 'WithdrawalRequest',
    example: {
      transactionId: 'payout-4711',
      client,
      pixKey: 'ana@example.com',
      pixType: 'EMAIL',
      amountCentavos: 15_000,
    },
  });

export const cpfParamsSchema = z.object({ cpf: cpfSchema });
export const txidParamsSchema = z.object({ txid: txidSchema });
export const withdrawalParamsSchema = z.object({ id: transactionIdSchema });

export const flowTypeSchema = z.enum(['onboarding', 'deposit', 'withdrawal']);

export const flowsQuerySchema = z.object({
  type: flowTypeSchema.optional(),
  status: z
    .string()
    .regex(/^[a-z_]{1,40}$/, 'must be a status name (lowercase letters and "_")')
    .optional(),
  cpf: cpfSchema.optional(),
  created_from: z.iso.datetime({ offset: true }).optional().meta({ description: 'inclusive, ISO 8601' }),
  created_to: z.iso.datetime({ offset: true }).optional().meta({ description: 'exclusive, ISO 8601' }),
  cursor: z.string().max(300).optional().meta({ description: 'opaque: the `next` of the previous page' }),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

// ------------------------------------------------------------------------- responses

const iso = z.string().meta({ description: 'ISO 8601 time' });

export const livenessLinkSchema = z.object({
  url: z.string(),
  qrcode: z.string(),
  type: z.enum(['onboarding', 'biometric_identification']),
  issuedAt: iso,
  expiresAt: iso,
}) satisfies z.ZodType<LivenessLink>;

const reviewSchema = reviewDecisionSchema;

export const onboardingStateSchema = z
  .object({
    status: z.enum(['kyc', 'awaiting_liveness', 'awaiting_review', 'approved', 'rejected', 'expired']),
    reasons: z.array(z.string()),
    flags: z.object({ pep: z.boolean() }),
    link: livenessLinkSchema.optional(),
    livenessStatus: z.string().optional(),
    review: reviewSchema.optional(),
    startedAt: iso,
    updatedAt: iso,
    finishedAt: iso.optional(),
  })
  .meta({ id: 'OnboardingState' }) satisfies z.ZodType<OnboardingState>;

export const onboardingResponseSchema = z
  .object({ workflowId: z.string(), state: onboardingStateSchema })
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
          qrcode: 'data:image/png;base64,iVBORw0KGgo=',
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
  .extend({ reused: z.boolean().meta({ description: 'true: the still-valid link again; false: a new one' }) })
  .meta({
    id: 'LivenessLink',
    example: {
      url: 'https://liveness.example.com/s/9b1e',
      qrcode: 'data:image/png;base64,iVBORw0KGgo=',
      type: 'onboarding',
      issuedAt: AT,
      expiresAt: LATER,
      reused: true,
    },
  });

export const depositQrSchema = z.object({
  txid: z.string(),
  payload: z.string().meta({ description: 'Pix copy-and-paste (BR Code)' }),
  image: z.string().meta({ description: 'data:image/png;base64,...' }),
  expiresAt: iso,
  amountCentavos: z.number().int(),
}) satisfies z.ZodType<DepositQr>;

const qrExample = {
  txid: TXID,
  payload:
    '00020101021226850014br.gov.bcb.pix2563pix.example.com/qr/v2/4711520400005303986540515000.005802BR6304ABCD',
  image: 'data:image/png;base64,iVBORw0KGgo=',
  expiresAt: LATER,
  amountCentavos: 15_000,
};

export const depositResponseSchema = depositQrSchema
  .extend({ workflowId: z.string() })
  .meta({ id: 'DepositQr', example: { ...qrExample, workflowId: `deposit-${TXID}` } });

/** What deposits and withdrawals both report of their progress. */
const moneyFlowProgress = {
  reason: z.string().optional(),
  notifications: z.number().int(),
  inquiries: z.number().int(),
  startedAt: iso,
  updatedAt: iso,
  finishedAt: iso.optional(),
};

export const depositStateSchema = z
  .object({
    status: z.enum(['creating', 'awaiting_payment', 'completed', 'expired', 'failed']),
    txid: z.string(),
    amountCentavos: z.number().int(),
    qr: depositQrSchema.optional(),
    payment: z
      .object({
        e2eId: z.string(),
        payerName: z.string().optional(),
        payerCpfMasked: z.string().optional(),
        paidAt: z.string().optional(),
      })
      .optional(),
    ...moneyFlowProgress,
  })
  .meta({
    id: 'DepositState',
    example: {
      status: 'awaiting_payment',
      txid: TXID,
      amountCentavos: 15_000,
      qr: qrExample,
      notifications: 0,
      inquiries: 1,
      startedAt: AT,
      updatedAt: AT,
    },
  }) satisfies z.ZodType<DepositState>;

export const withdrawalStateSchema = z
  .object({
    status: z.enum(['validating', 'sending', 'processing', 'completed', 'failed', 'stuck']),
    transactionId: z.string(),
    amountCentavos: z.number().int(),
    e2eId: z.string().optional(),
    receiptStatus: z.number().int().optional(),
    receiptStored: z.boolean(),
    paidAt: z.string().optional(),
    ...moneyFlowProgress,
  })
  .meta({ id: 'WithdrawalState' }) satisfies z.ZodType<WithdrawalState>;

export const withdrawalResponseSchema = z
  .object({ workflowId: z.string(), transactionId: z.string(), state: withdrawalStateSchema })
  .meta({
    id: 'Withdrawal',
    example: {
      workflowId: 'withdrawal-payout-4711',
      transactionId: 'payout-4711',
      state: {
        status: 'completed',
        transactionId: 'payout-4711',
        amountCentavos: 15_000,
        e2eId: 'E1234567820261121140300000004711',
        receiptStatus: 1,
        receiptStored: true,
        paidAt: AT,
        notifications: 1,
        inquiries: 1,
        startedAt: AT,
        updatedAt: LATER,
        finishedAt: LATER,
      },
    },
  });

export const flowItemSchema = z
  .object({
    workflowId: z.string(),
    type: flowTypeSchema,
    businessId: z.string(),
    status: z.string(),
    cpfMasked: z.string().nullable(),
    merchant: z.string().nullable(),
    amountCentavos: z.number().int().nullable(),
    reason: z.string().nullable(),
    details: z.record(z.string(), z.unknown()),
    createdAt: iso,
    updatedAt: iso,
  })
  .meta({ id: 'Flow' });

export const flowPageSchema = z
  .object({
    items: z.array(flowItemSchema),
    next: z.string().nullable().meta({ description: 'cursor of the next page; null on the last one' }),
  })
  .meta({
    id: 'FlowPage',
    example: {
      items: [
        {
          workflowId: `deposit-${TXID}`,
          type: 'deposit',
          businessId: TXID,
          status: 'awaiting_payment',
          cpfMasked: '***.018.257-**',
          merchant: 'sandbox-merchant',
          amountCentavos: 15_000,
          reason: null,
          details: {},
          createdAt: AT,
          updatedAt: AT,
        },
      ],
      next: null,
    },
  });

export const problemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string().optional(),
    instance: z.string().optional(),
    invalid_params: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
  })
  .meta({
    id: 'Problem',
    example: {
      type: 'https://pixflow.dev/problems/validation-error',
      title: 'Request validation failed',
      status: 400,
      detail: 'body.client.cpf: has invalid check digits',
      instance: '/v1/deposits',
      invalid_params: [{ name: 'body.client.cpf', reason: 'has invalid check digits' }],
    },
  });
