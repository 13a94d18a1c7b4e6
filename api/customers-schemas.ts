import { z } from 'zod';
import { accountKinds, customerVerifications } from '../contracts/customer';
import {
  accountIdSchema,
  customerAccountInputSchema,
  depositLimitsInputSchema,
} from '../contracts/customer-input';
import { flowTypeSchema } from '../contracts/events';
import { cpfSchema } from '../contracts/flow-input';
import { impededReasons } from '../eligibility/contract';
import { AT, iso, LATER, TXID } from './schema-parts';

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
      limitCentavos: z
        .number()
        .int()
        .meta({ description: "the rules policy's withdrawals.dailyLimitCentavos in force" }),
      remainingCentavos: z.number().int(),
    }),
    lastBiometric: z.object({ at: iso, outcome: z.string() }).nullable(),
    eligibility: z.enum(['eligible', 'impeded', 'unknown']).meta({
      description:
        'what the registry of impeded people says of the person (docs/rules.md, Eligibility): `impeded` from its bar until an operator reinstates the person, even once it answers eligible again; `unknown` before any answer',
    }),
    impeded: z
      .object({
        reason: z.enum(impededReasons),
        since: iso,
        until: iso.nullable().meta({ description: 'until when the bar holds, when the registry says' }),
        source: z
          .string()
          .meta({ description: 'the check that found it: registry:deposit, registry:onboarding' }),
        registryAnswer: z.enum(['eligible', 'impeded']).meta({
          description: "the registry's latest answer: `eligible` lets an operator reinstate the person",
        }),
      })
      .nullable()
      .meta({ description: 'why and since when the person is impeded; null unless `impeded`' }),
    closedAt: iso.nullable().meta({
      description: 'when an operator closed the account of the impeded person; no deposit is taken',
    }),
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
      eligibility: 'eligible',
      impeded: null,
      closedAt: null,
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

export const depositLimitsBodySchema = depositLimitsInputSchema.meta({
  id: 'DepositLimitsRequest',
  description:
    "The limits the person sets on their own deposits, in integer centavos per America/Sao_Paulo day, ISO week (Monday to Sunday) and calendar month; null removes one, a period left out stays as it is. A lower limit applies at once; a higher one, or removing one, after the cooling-off (the rules policy's deposits.limitCoolingOffMs).",
  example: { daily: 50_000, weekly: 200_000, monthly: null },
});

const depositLimitSchema = z
  .object({
    limitCentavos: z.number().int().nullable().meta({ description: 'the limit in force; null: none' }),
    pending: z
      .object({
        limitCentavos: z
          .number()
          .int()
          .nullable()
          .meta({ description: 'the limit it sets; null: removes it' }),
        appliesAt: iso.meta({ description: 'when the cooling-off ends and it applies' }),
      })
      .nullable()
      .meta({ description: 'a raised or removed limit waiting for the cooling-off' }),
    start: iso.meta({ description: 'the period counted: from' }),
    end: iso.meta({ description: 'the period counted: until (excluded)' }),
    countedCentavos: z.number().int().meta({
      description:
        "the period's deposits that are completed, held, or waiting for payment (expired, failed and returned ones do not count)",
    }),
    remainingCentavos: z
      .number()
      .int()
      .nullable()
      .meta({ description: 'what is left; null without a limit' }),
  })
  .meta({ id: 'DepositLimit', description: "one period's limit and what it counted" });

export const depositLimitsSchema = z
  .object({
    timeZone: z.string().meta({ description: 'the calendar the periods are counted in' }),
    daily: depositLimitSchema,
    weekly: depositLimitSchema,
    monthly: depositLimitSchema,
  })
  .meta({
    id: 'DepositLimits',
    example: {
      timeZone: 'America/Sao_Paulo',
      daily: {
        limitCentavos: 50_000,
        pending: null,
        start: '2026-11-21T03:00:00.000Z',
        end: '2026-11-22T03:00:00.000Z',
        countedCentavos: 15_000,
        remainingCentavos: 35_000,
      },
      weekly: {
        limitCentavos: 200_000,
        pending: { limitCentavos: 300_000, appliesAt: LATER },
        start: '2026-11-16T03:00:00.000Z',
        end: '2026-11-23T03:00:00.000Z',
        countedCentavos: 15_000,
        remainingCentavos: 185_000,
      },
      monthly: {
        limitCentavos: null,
        pending: null,
        start: '2026-11-01T03:00:00.000Z',
        end: '2026-12-01T03:00:00.000Z',
        countedCentavos: 15_000,
        remainingCentavos: null,
      },
    },
  });
export type DepositLimitsView = z.infer<typeof depositLimitsSchema>;
