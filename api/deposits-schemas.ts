import { z } from 'zod';
import { customerVerifications } from '../contracts/customer';
import {
  type DepositQr,
  type DepositRefusal,
  type DepositResolution,
  type DepositResolutionAnswer,
  type DepositReturn,
  type DepositState,
  depositStatuses,
} from '../contracts/deposit';
import { depositResolutionInputSchema } from '../contracts/deposit-input';
import { txidSchema } from '../contracts/flow-input';
import { depositLimitPeriods } from '../contracts/rules';
import { validationProblem } from '../http/problem';
import { parse, type RequestPart } from '../http/request-input';
import { depositRequestSchema, renamedPayerFieldIssues } from '../starters/requests';
import { AT, client, iso, LATER, moneyFlowProgress, TXID } from './schema-parts';

// What the deposit routes take and answer.

/** txid and merchant may be left out: a txid is generated and the configured merchant used. */
export const depositBodySchema = depositRequestSchema.meta({
  id: 'DepositRequest',
  example: {
    txid: TXID,
    client: {
      ...client,
      birthday: '1990-01-02',
      bankAccount: { ispb: '60701190', branch: '1234', number: '987654321' },
    },
    amountCentavos: 15_000,
  },
});
export type DepositBody = z.output<typeof depositBodySchema>;

/**
 * A deposit request (the API's body, a Nexus operation's input), checked: 400 naming each bad
 * field, each renamed one with where it went (starters/requests.ts).
 */
export function parseDepositBody(where: RequestPart, value: unknown): DepositBody {
  const renamed = renamedPayerFieldIssues(value);
  if (renamed.length > 0) {
    const rest = depositBodySchema.safeParse(value);
    throw validationProblem(where, new z.ZodError([...renamed, ...(rest.success ? [] : rest.error.issues)]));
  }
  return parse(depositBodySchema, where, value);
}

export const depositResolutionBodySchema = depositResolutionInputSchema.meta({
  id: 'DepositResolutionRequest',
  description:
    "An operator's decision on a held deposit: `accept` credits it (completed); `return` sends the money back through the connector that received it (return_requested, then returned or return_failed), or leaves it to be paid back by hand (to_return) when that connector cannot return it.",
  example: { decision: 'return', by: 'ops@example.com', reason: 'payer is not the account holder' },
});

export const txidParamsSchema = z.object({ txid: txidSchema });

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

const depositLimitPeriodsSchema = z.enum(depositLimitPeriods);

/** Why the rules refused a deposit, with what the caller acts on (a `refused` deposit only). */
const depositRefusalSchema = z
  .discriminatedUnion('reason', [
    z.object({
      reason: z.literal('not_verified'),
      verification: z.enum(customerVerifications).exclude(['approved']),
    }),
    z.object({
      reason: z.literal('impeded'),
      impeded: z.object({ reason: z.string(), since: iso, until: iso.nullable() }),
    }),
    z.object({ reason: z.literal('closed') }),
    z.object({
      reason: z.literal('deposit_limit_exceeded'),
      exceeded: z.array(depositLimitPeriodsSchema),
      remainingCentavos: z.partialRecord(depositLimitPeriodsSchema, z.number().int()),
    }),
    z.object({ reason: z.literal('eligibility_unavailable') }),
  ])
  .meta({
    id: 'DepositRefusal',
    description: 'why the rules refused the deposit (docs/rules.md)',
  }) satisfies z.ZodType<DepositRefusal | undefined>;

/** A held deposit's money on its way back to the payer, through the connector that received it. */
const depositReturnSchema = z
  .object({
    returnId: z.string().meta({ description: "pixflow's id of the return, derived from the deposit" }),
    amountCentavos: z.number().int(),
    requestedAt: iso,
    state: z.enum(['requested', 'returned', 'failed']),
    by: z.string().meta({ description: 'the operator who decided it, or `rules` (the automatic return)' }),
    rtrId: z.string().optional().meta({ description: "the return's end-to-end id at the Central Bank" }),
    returnedAt: iso.optional(),
    reason: z.string().optional().meta({ description: 'why it failed, as the PSP said' }),
    policyVersion: z.number().int().optional().meta({
      description: 'the rules version an automatic return was decided under',
    }),
    brandPolicyVersion: z.number().int().optional().meta({
      description:
        "with it, the version of the brand's own rules laid on the operator's (docs/policy.md); absent when the brand sets none, and for the default brand",
    }),
  })
  .meta({ id: 'DepositReturn' }) satisfies z.ZodType<DepositReturn>;

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
    .extend({
      at: iso,
      policyVersion: z.number().int().optional().meta({
        description: 'the rules version an automatic return (`by: rules`) was decided under',
      }),
      brandPolicyVersion: z.number().int().optional().meta({
        description:
          "with it, the version of the brand's own rules laid on the operator's; absent when the brand sets none, and for the default brand",
      }),
    })
    .optional()
    .meta({ description: "an operator's decision on the held deposit" }) satisfies z.ZodType<
    DepositResolution | undefined
  >,
  policyVersion: z.number().int().optional().meta({
    description:
      'the version of the rules the deposit was screened under (docs/rules.md); absent for older deposits',
  }),
  brandPolicyVersion: z.number().int().optional().meta({
    description:
      "the version of the deposit's brand's own rules laid on the operator's `policyVersion` (docs/policy.md, Rules of a brand); absent when the brand sets none, for the default brand and for older deposits",
  }),
  refusal: depositRefusalSchema.optional(),
  connector: z.string().optional().meta({
    description: 'the connector that made its charge, and returns its money; absent: identity-payments',
  }),
  return: depositReturnSchema.optional(),
  returnByHand: z
    .object({ connector: z.string(), why: z.enum(['connector_cannot_return', 'connector_not_configured']) })
    .optional()
    .meta({
      description:
        '`to_return`: the money is to be sent back by hand, the connector cannot return received Pix (or is not configured)',
    }),
  ...moneyFlowProgress,
}) satisfies z.ZodType<DepositState>;

/** A return the payer's side started (MED) against the deposit's Pix, as pixflow recorded it. */
const depositReversalSchema = z
  .object({
    returnId: z.string().meta({ description: "the PSP's id of the return" }),
    e2eId: z.string().meta({ description: "the deposit's Pix" }),
    nature: z.string().meta({
      description:
        '`med_operational`, `med_fraud`, `med_automatic`, or `original`/`withdrawal` for a return pixflow did not ask for',
    }),
    amountCentavos: z.number().int(),
    partial: z.boolean().meta({ description: "less than the deposit's amount" }),
    state: z.enum(['processing', 'returned', 'failed']),
    firstSeenAt: iso,
    settledAt: iso.optional(),
  })
  .meta({ id: 'DepositReversal' });

export const depositStateViewSchema = depositStateSchema
  .extend({
    qr: depositQrViewSchema.optional(),
    reversed: z.array(depositReversalSchema).optional().meta({
      description:
        "the MED returns of the deposit's Pix, oldest first (docs/connectors.md, Reversals); the deposit's status stays what it was",
    }),
  })
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
