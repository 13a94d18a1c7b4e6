import { z } from 'zod';
import { customerVerifications } from '../contracts/customer';
import {
  type DepositQr,
  type DepositRefusal,
  type DepositResolution,
  type DepositResolutionAnswer,
  type DepositState,
  depositStatuses,
} from '../contracts/deposit';
import { depositInputSchema, depositResolutionInputSchema } from '../contracts/deposit-input';
import { txidSchema } from '../contracts/flow-input';
import { depositLimitPeriods } from '../contracts/rules';
import { validationProblem } from '../http/problem';
import { parse, type RequestPart } from '../http/request-input';
import { AT, client, iso, LATER, moneyFlowProgress, TXID } from './schema-parts';

// What the deposit routes take and answer.

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
 * The payer's bank account fields as the API named them before `client.bankAccount`. The API
 * drops properties it does not know; these it refuses, saying where they went, so that a caller
 * still sending them learns it instead of losing the account without a word.
 */
const RENAMED_PAYER_FIELDS = {
  bankispb: 'client.bankAccount.ispb',
  bankbranch: 'client.bankAccount.branch',
  bankaccount: 'client.bankAccount.number',
} as const;

/** A 400 naming each renamed field the request still sends (`body.client.bankispb`), with the rest of its errors. */
function refuseRenamedFields(where: RequestPart, value: unknown): void {
  const payer = (value as { client?: unknown } | null | undefined)?.client;
  if (!payer || typeof payer !== 'object') return;
  const renamed = Object.entries(RENAMED_PAYER_FIELDS)
    .filter(([old]) => Object.hasOwn(payer, old))
    .map(([old, now]) => ({
      code: 'custom' as const,
      path: ['client', old],
      message: `renamed to ${now}`,
      input: undefined,
    }));
  if (renamed.length === 0) return;
  const rest = depositBodySchema.safeParse(value);
  throw validationProblem(where, new z.ZodError([...renamed, ...(rest.success ? [] : rest.error.issues)]));
}

/** A deposit request (the API's body, a Nexus operation's input), checked: 400 naming each bad field. */
export function parseDepositBody(where: RequestPart, value: unknown): DepositBody {
  refuseRenamedFields(where, value);
  return parse(depositBodySchema, where, value);
}

export const depositResolutionBodySchema = depositResolutionInputSchema.meta({
  id: 'DepositResolutionRequest',
  description:
    "An operator's decision on a held deposit: `accept` credits it (completed), `return` leaves it to be paid back by hand (to_return).",
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
  policyVersion: z.number().int().optional().meta({
    description:
      'the version of the rules the deposit was screened under (docs/rules.md); absent for older deposits',
  }),
  refusal: depositRefusalSchema.optional(),
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
