import { z } from 'zod';
import { type BiometricsState, biometricsStatuses } from '../contracts/biometrics';
import { accountKinds, customerVerifications } from '../contracts/customer';
import { accountIdSchema, customerAccountInputSchema } from '../contracts/customer-input';
import {
  type DepositQr,
  type DepositResolution,
  type DepositResolutionAnswer,
  type DepositState,
  depositStatuses,
} from '../contracts/deposit';
import { depositInputSchema, depositResolutionInputSchema } from '../contracts/deposit-input';
import { flowStateSchema, flowStatuses, flowTypeSchema } from '../contracts/events';
import { type LivenessLink, type OnboardingState, onboardingStatuses } from '../contracts/onboarding';
import { onboardingInputSchema, reviewDecisionSchema } from '../contracts/onboarding-input';
import type { FlowType } from '../contracts/shared';
import { cpfSchema, txidSchema } from '../contracts/shared-input';
import { type WithdrawalState, withdrawalStatuses } from '../contracts/withdrawal';
import { transactionIdSchema, withdrawalInputSchema } from '../contracts/withdrawal-input';

// The API's request and response shapes. Requests reuse the flows' input schemas (one source of
// truth for validation and for /openapi.json); responses mirror the workflow state types and are
// checked against them at compile time with `satisfies`. State reads answer a view of the state:
// its images (several KB of base64 each) are replaced by links to the PNG routes.

// Every request and answer carries an example (`.meta({ example })`): the API reference shows
// them, and test/unit/openapi-document.test.ts parses each with its own schema.

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

export const depositResolutionBodySchema = depositResolutionInputSchema.meta({
  id: 'DepositResolutionRequest',
  description:
    "An operator's decision on a held deposit: `accept` credits it (completed), `return` leaves it to be paid back by hand (to_return).",
  example: { decision: 'return', by: 'ops@example.com', reason: 'payer is not the account holder' },
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
export const accountParamsSchema = z.object({ cpf: cpfSchema, id: accountIdSchema });

export const customerAccountBodySchema = customerAccountInputSchema.meta({
  id: 'CustomerAccountRequest',
  description:
    "A Pix key and its type, or the composite account form (pixType ACCOUNT, `key;ispb;branch;account;type`). A CPF key must be the person's own CPF.",
  example: { pixKey: 'ana@example.com', pixType: 'EMAIL' },
});
export const txidParamsSchema = z.object({ txid: txidSchema });
export const withdrawalParamsSchema = z.object({ id: transactionIdSchema });

const anyFlowStatus = [...new Set(Object.values(flowStatuses).flat())];
const notAStatus = (value: unknown, type: FlowType | undefined, allowed: readonly string[]) =>
  `${JSON.stringify(value)?.slice(0, 60)} is not a ${type ? `${type} ` : ''}status; one of: ${allowed.join(', ')}`;

export const flowsQuerySchema = z
  .object({
    type: flowTypeSchema.optional(),
    status: z
      .enum(anyFlowStatus as [string, ...string[]], {
        error: (issue) => notAStatus(issue.input, undefined, anyFlowStatus),
      })
      .optional()
      .meta({ description: 'a status of the given `type` (without `type`: of any type)' }),
    cpf: cpfSchema.optional(),
    created_from: z.iso.datetime({ offset: true }).optional().meta({ description: 'inclusive, ISO 8601' }),
    created_to: z.iso.datetime({ offset: true }).optional().meta({ description: 'exclusive, ISO 8601' }),
    cursor: z.string().max(300).optional().meta({ description: 'opaque: the `next` of the previous page' }),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  })
  // A status of another type would only ever match nothing: say so instead of an empty page.
  .superRefine((q, ctx) => {
    if (!q.type || !q.status) return;
    const allowed = flowStatuses[q.type];
    if (!allowed.includes(q.status)) {
      ctx.addIssue({ code: 'custom', path: ['status'], message: notAStatus(q.status, q.type, allowed) });
    }
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

const depositQrViewSchema = depositQrSchema.omit({ image: true }).extend({
  imageUrl: z.string().meta({ description: 'the QR code as PNG: GET /v1/deposits/{txid}/qrcode.png' }),
});

/** What deposits and withdrawals both report of their progress. */
const moneyFlowProgress = {
  reason: z.string().optional(),
  notifications: z.number().int(),
  inquiries: z.number().int(),
  startedAt: iso,
  updatedAt: iso,
  finishedAt: iso.optional(),
};

const depositStateSchema = z.object({
  status: z.enum(depositStatuses),
  txid: z.string(),
  amountCentavos: z.number().int(),
  qr: depositQrSchema.optional(),
  payment: z
    .object({
      e2eId: z.string(),
      payerName: z.string().optional(),
      payerCpfMasked: z.string().optional(),
      paidAt: z.string().optional(),
      payerIsClient: z.boolean().optional().meta({
        description:
          'whether the person paid it themselves (an empty payer CPF counts as theirs); absent for deposits from before the check',
      }),
    })
    .optional(),
  resolution: depositResolutionInputSchema
    .extend({ at: iso })
    .optional()
    .meta({ description: "an operator's decision on the held deposit" }) satisfies z.ZodType<
    DepositResolution | undefined
  >,
  ...moneyFlowProgress,
}) satisfies z.ZodType<DepositState>;

export const depositStateViewSchema = depositStateSchema
  .extend({ qr: depositQrViewSchema.optional() })
  .meta({ id: 'DepositState' });
export type DepositStateView = z.infer<typeof depositStateViewSchema>;

export const depositStateResponseSchema = z
  .object({ workflowId: z.string(), state: depositStateViewSchema })
  .meta({
    id: 'Deposit',
    example: {
      workflowId: `deposit-${TXID}`,
      state: {
        status: 'awaiting_payment',
        txid: TXID,
        amountCentavos: 15_000,
        qr: {
          txid: TXID,
          payload: qrExample.payload,
          expiresAt: LATER,
          amountCentavos: 15_000,
          imageUrl: `/v1/deposits/${TXID}/qrcode.png`,
        },
        notifications: 0,
        inquiries: 1,
        startedAt: AT,
        updatedAt: AT,
      },
    },
  });

export const depositResolutionResponseSchema = depositResolutionInputSchema
  .extend({
    txid: z.string(),
    status: z.enum(depositStatuses).meta({ description: 'what the decision led to: completed or to_return' }),
  })
  .meta({
    id: 'DepositResolution',
    example: {
      txid: TXID,
      decision: 'return',
      by: 'ops@example.com',
      reason: 'payer is not the account holder',
      status: 'to_return',
    },
  }) satisfies z.ZodType<DepositResolutionAnswer>;

/** The biometric identification a withdrawal waits for (step-up), its QR image as a link. */
const stepUpSchema = z.object({
  cause: z
    .enum(['amount_above_step_up', 'first_payout_to_account'])
    .meta({ description: 'above BIOMETRIC_STEP_UP_CENTAVOS, or the first payout to a registered account' }),
  biometricsWorkflowId: z.string(),
  url: z.string().optional().meta({ description: 'the liveness link to hand the person' }),
  issuedAt: iso.optional(),
  expiresAt: iso.optional(),
  outcome: z.string().optional().meta({ description: 'passed, failed, expired or unavailable, once known' }),
});

const withdrawalStateSchema = z.object({
  status: z.enum(withdrawalStatuses),
  transactionId: z.string(),
  amountCentavos: z.number().int(),
  e2eId: z.string().optional(),
  receiptStatus: z.number().int().optional(),
  receiptStored: z.boolean(),
  paidAt: z.string().optional(),
  stepUp: stepUpSchema.optional(),
  ...moneyFlowProgress,
}) satisfies z.ZodType<WithdrawalState>;

export const withdrawalStateViewSchema = withdrawalStateSchema
  .extend({
    reason: z.string().optional().meta({
      description:
        'why it failed or was refused: a refusal reason code (README "Rules"), a KYC reason code, or the provider\'s reason',
    }),
    stepUp: stepUpSchema
      .extend({
        qrcodeUrl: z.string().optional().meta({
          description: 'the link as a QR code PNG: GET /v1/withdrawals/{id}/biometrics-link/qrcode.png',
        }),
      })
      .optional(),
  })
  .meta({ id: 'WithdrawalState' });
export type WithdrawalStateView = z.infer<typeof withdrawalStateViewSchema>;

export const withdrawalResponseSchema = z
  .object({ workflowId: z.string(), transactionId: z.string(), state: withdrawalStateViewSchema })
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

/** A flow's row, as GET /v1/flows lists it and its events carry it. */
export const flowItemSchema = flowStateSchema;

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
          cpfHash: '5d41402abc4b2a76b9719d911017c592a1f0e3b7c6d8e9f0a1b2c3d4e5f60718',
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
    flowStatus: z
      .string()
      .optional()
      .meta({ description: "the flow's status, when it is why the request cannot be answered" }),
    reason: z
      .string()
      .optional()
      .meta({ description: "a reason code: the flow's reason for that status, or the rule that refuses" }),
    verification: z
      .enum(customerVerifications)
      .optional()
      .meta({ description: "the person's verification, when it is why a flow is not started" }),
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

// ------------------------------------------------------------------------- customers

export const customerAccountSchema = z
  .object({
    id: z.string().meta({ description: 'DELETE /v1/customers/{cpf}/accounts/{id} removes it' }),
    kind: z.enum(accountKinds),
    pixType: z.string().nullable().meta({ description: 'the Pix key type; null for a bank account' }),
    masked: z.string().meta({ description: 'the key or account as shown; never stored in plain text' }),
    source: z.enum(['deposit', 'api']),
    createdAt: iso,
  })
  .meta({
    id: 'CustomerAccount',
    example: {
      id: '17',
      kind: 'pix_key',
      pixType: 'EMAIL',
      masked: 'a***@example.com',
      source: 'api',
      createdAt: AT,
    },
  });

export const customerAccountListSchema = z.object({ items: z.array(customerAccountSchema) }).meta({
  id: 'CustomerAccounts',
  example: {
    items: [
      {
        id: '16',
        kind: 'bank_account',
        pixType: null,
        masked: 'ispb 60701190 branch 1234 account ***321',
        source: 'deposit',
        createdAt: AT,
      },
    ],
  },
});

export const customerSchema = z
  .object({
    cpfMasked: z.string(),
    cpfHash: z.string().meta({ description: "keyed hash of the person's CPF (GET /v1/flows rows' cpfHash)" }),
    verification: z.object({
      status: z.enum(customerVerifications).meta({ description: '`suspended` counts as not verified' }),
      at: iso.nullable().meta({ description: 'since when it is in this status' }),
      by: z
        .string()
        .nullable()
        .meta({ description: 'the onboarding workflow id that set it, or `operator:<by>`' }),
      flow: z.string().nullable().meta({ description: 'the onboarding workflow id' }),
      suspension: z
        .object({
          reason: z.string(),
          at: iso,
          evidence: z.record(z.string(), z.unknown()),
        })
        .nullable()
        .meta({ description: 'why the verification is suspended, until an operator decides' }),
    }),
    kyc: z
      .object({
        status: z.string().nullable(),
        under18: z.boolean().nullable(),
        deceased: z.boolean().nullable(),
        restricted: z.boolean().nullable(),
        pep: z.boolean().nullable(),
        readAt: iso,
        ageSeconds: z.number().int().meta({ description: 'how long ago the KYC answer was read' }),
      })
      .nullable()
      .meta({ description: 'the facts of the last KYC answer; null before any' }),
    accounts: z.array(customerAccountSchema),
    payoutsToday: z.object({
      day: z.string().meta({ description: 'the Brasília (America/Sao_Paulo) day counted, YYYY-MM-DD' }),
      totalCentavos: z
        .number()
        .int()
        .meta({ description: "today's withdrawals that were not refused and have not failed" }),
      count: z.number().int(),
      limitCentavos: z.number().int().meta({ description: 'WITHDRAWAL_DAILY_LIMIT_CENTAVOS' }),
      remainingCentavos: z.number().int(),
    }),
    lastBiometric: z.object({ at: iso, outcome: z.string() }).nullable(),
    openFlows: z.array(
      z.object({
        workflowId: z.string(),
        type: flowTypeSchema,
        status: z.string(),
        amountCentavos: z.number().int().nullable(),
        createdAt: iso,
      }),
    ),
  })
  .meta({
    id: 'Customer',
    example: {
      cpfMasked: '***.018.257-**',
      cpfHash: '5d41402abc4b2a76b9719d911017c592',
      verification: {
        status: 'approved',
        at: AT,
        by: 'onboarding-5d41402abc4b2a76b9719d911017c592',
        flow: 'onboarding-5d41402abc4b2a76b9719d911017c592',
        suspension: null,
      },
      kyc: {
        status: 'regular',
        under18: false,
        deceased: false,
        restricted: false,
        pep: false,
        readAt: AT,
        ageSeconds: 3600,
      },
      accounts: [
        {
          id: '17',
          kind: 'pix_key',
          pixType: 'EMAIL',
          masked: 'a***@example.com',
          source: 'api',
          createdAt: AT,
        },
      ],
      payoutsToday: {
        day: '2026-11-21',
        totalCentavos: 25_050,
        count: 1,
        limitCentavos: 5_000_000,
        remainingCentavos: 4_974_950,
      },
      lastBiometric: null,
      openFlows: [
        {
          workflowId: `deposit-${TXID}`,
          type: 'deposit',
          status: 'awaiting_payment',
          amountCentavos: 15_000,
          createdAt: AT,
        },
      ],
    },
  });
export type CustomerView = z.infer<typeof customerSchema>;
