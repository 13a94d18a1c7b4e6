import { z } from 'zod';
import { type WithdrawalState, withdrawalStatuses } from '../contracts/withdrawal';
import { transactionIdSchema } from '../contracts/withdrawal-input';
import { withdrawalRequestSchema } from '../starters/requests';
import { AT, client, iso, LATER, moneyFlowProgress } from './schema-parts';

// What the withdrawal routes take and answer.

/** transactionId and merchant may be left out (starters/requests.ts); the route checks the filled-in request. */
export const withdrawalBodySchema = withdrawalRequestSchema.meta({
  id: 'WithdrawalRequest',
  example: {
    transactionId: 'payout-4711',
    client,
    pixKey: 'ana@example.com',
    pixType: 'EMAIL',
    amountCentavos: 15_000,
  },
});

export type WithdrawalBody = z.output<typeof withdrawalBodySchema>;

export const withdrawalParamsSchema = z.object({ transactionId: transactionIdSchema });

/** The biometric identification a withdrawal waits for (step-up), its QR image as a link. */
const stepUpSchema = z.object({
  cause: z.enum(['amount_above_step_up', 'first_payout_to_account']).meta({
    description:
      "above the rules policy's withdrawals.stepUpAboveCentavos, or the first payout to a registered account",
  }),
  biometricsWorkflowId: z.string(),
  url: z.string().optional().meta({ description: 'the liveness link to hand the person' }),
  issuedAt: iso.optional(),
  expiresAt: iso.optional(),
  outcome: z.string().optional().meta({ description: 'passed, failed, expired or unavailable, once known' }),
});

/** The prize deadline (docs/payout-controls.md). */
const deadlineSchema = z.object({
  dueAt: iso.meta({ description: "the rules policy's payouts.deadlineMs after the request" }),
  atRiskAt: iso.meta({
    description: "the rules policy's payouts.atRiskShare of the deadline after the request",
  }),
  state: z
    .enum(['at_risk', 'missed'])
    .optional()
    .meta({ description: 'set once the withdrawal, still open, passed atRiskAt or dueAt' }),
  waitedForPersonMs: z
    .number()
    .int()
    .meta({ description: "time spent waiting for the person (biometric step-up), apart from pixflow's" }),
});

/** Four eyes on a large payout (docs/payout-controls.md). */
const approvalSchema = z.object({
  required: z
    .number()
    .int()
    .meta({ description: "different operators who must approve it (the rules policy's payouts.approvers)" }),
  approvals: z.array(
    z.object({ operator: z.string().meta({ description: "the operator's e-mail" }), at: iso }),
  ),
  refusedBy: z.string().optional(),
  refusal: z.string().optional().meta({ description: "the refusing operator's reason" }),
});

const authorizationSchema = z
  .object({
    decision: z.enum(['approve', 'deny', 'no_answer']),
    reason: z
      .string()
      .optional()
      .meta({ description: "the backend's reason to deny, or why there was no answer" }),
  })
  .meta({ description: "the operator's backend's answer (PAYOUT_AUTHORIZATION_URL)" });

const withdrawalStateSchema = z.object({
  status: z.enum(withdrawalStatuses),
  transactionId: z.string(),
  amountCentavos: z.number().int(),
  e2eId: z.string().optional(),
  receiptStatus: z.number().int().optional().meta({
    deprecated: true,
    description:
      "the provider's own receipt code as it answered (0 not found, 1 requested, 2 failed, 3 processing, 4 completed), not pixflow's: to be removed; `status` says the payout's outcome and `receiptStored` whether its receipt is kept",
  }),
  receiptStored: z.boolean(),
  paidAt: z.string().optional(),
  stepUp: stepUpSchema.optional(),
  deadline: deadlineSchema.optional().meta({ description: 'set once the money rules let it through' }),
  approval: approvalSchema.optional().meta({
    description: "only above the rules policy's payouts.approvalAboveCentavos: it waits in awaiting_approval",
  }),
  requestedBy: z.string().optional().meta({ description: 'a manual payout: the operator who asked for it' }),
  authorization: authorizationSchema.optional(),
  policyVersion: z.number().int().optional().meta({
    description:
      'the version of the rules the withdrawal was decided under (docs/rules.md); absent for older withdrawals',
  }),
  brandPolicyVersion: z.number().int().optional().meta({
    description:
      "the version of the withdrawal's brand's own rules laid on the operator's `policyVersion` (docs/policy.md, Rules of a brand); absent when the brand sets none, for the default brand and for older withdrawals",
  }),
  ...moneyFlowProgress,
}) satisfies z.ZodType<WithdrawalState>;

export const withdrawalStateViewSchema = withdrawalStateSchema
  .extend({
    reason: z.string().optional().meta({
      description:
        "why it failed or was refused: a refusal reason code (docs/rules.md), a KYC reason code, or the provider's reason",
    }),
    stepUp: stepUpSchema
      .extend({
        qrcodeUrl: z.string().optional().meta({
          description:
            'the link as a QR code PNG: GET /v1/withdrawals/{transactionId}/biometrics-link/qrcode.png',
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
