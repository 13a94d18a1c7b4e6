import { z } from 'zod';
import { accountKinds, customerVerifications } from '../contracts/customer';
import { accountIdSchema, customerAccountInputSchema } from '../contracts/customer-input';
import { flowTypeSchema } from '../contracts/events';
import { cpfSchema } from '../contracts/flow-input';
import { AT, iso, TXID } from './schema-parts';

// What the customer routes take and answer.

export const accountParamsSchema = z.object({ cpf: cpfSchema, id: accountIdSchema });

export const customerAccountBodySchema = customerAccountInputSchema.meta({
  id: 'CustomerAccountRequest',
  description:
    "A Pix key and its type, or the composite account form (pixType ACCOUNT, `key;ispb;branch;account;type`). A CPF key must be the person's own CPF.",
  example: { pixKey: 'ana@example.com', pixType: 'EMAIL' },
});

const pixKeyAccountExample = {
  id: '17',
  kind: 'pix_key',
  pixType: 'EMAIL',
  masked: 'a***@example.com',
  source: 'api',
  createdAt: AT,
};

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
    example: pixKeyAccountExample,
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
      accounts: [pixKeyAccountExample],
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
