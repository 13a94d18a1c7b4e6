import { z } from 'zod';
import type { Config } from '../common/config';
import { depositInputSchema } from '../contracts/deposit-input';
import { DEFAULT_BRAND } from '../contracts/flow';
import { txidSchema } from '../contracts/flow-input';
import { onboardingInputSchema } from '../contracts/onboarding-input';
import { transactionIdSchema, withdrawalInputSchema } from '../contracts/withdrawal-input';

// What a caller asks a flow to start with: POST /v1/deposits' body is a Nexus createDeposit's
// input, and so on. Checked by the same schemas wherever it comes from; each surface names a bad
// field its own way (api/: `body.…`, nexus/: `input.…`). The API's document adds its examples.

/** txid and merchant may be left out: the starter generates a txid and uses the configured merchant. */
export const depositRequestSchema = depositInputSchema.extend({
  txid: txidSchema.optional().meta({ description: 'digits only; generated when absent' }),
  merchant: depositInputSchema.shape.merchant
    .optional()
    .meta({ description: 'default: the configured merchant' }),
});
export type DepositRequestBody = z.output<typeof depositRequestSchema>;

/**
 * The payer's bank account fields as the API named them before `client.bankAccount`. Properties
 * nobody knows are dropped; these are refused, saying where they went, so that a caller still
 * sending them learns it instead of losing the account without a word.
 */
const RENAMED_PAYER_FIELDS = {
  bankispb: 'client.bankAccount.ispb',
  bankbranch: 'client.bankAccount.branch',
  bankaccount: 'client.bankAccount.number',
} as const;

/**
 * The problems a deposit request has with the renamed fields it still sends (`client.bankispb`:
 * `renamed to client.bankAccount.ispb`), to report with the rest of its problems.
 */
export function renamedPayerFieldIssues(value: unknown): z.core.$ZodIssue[] {
  const payer = (value as { client?: unknown } | null | undefined)?.client;
  if (!payer || typeof payer !== 'object') return [];
  return Object.entries(RENAMED_PAYER_FIELDS)
    .filter(([old]) => Object.hasOwn(payer, old))
    .map(([old, now]) => ({
      code: 'custom',
      path: ['client', old],
      message: `renamed to ${now}`,
      input: undefined,
    }));
}

/**
 * withdrawalInputSchema carries a refinement (pix key vs type), which zod does not let us extend:
 * this is its shape with the two optional fields; withdrawalRequestOf then checks the filled-in
 * request with withdrawalInputSchema itself, so the key check runs and names the same fields.
 */
export const withdrawalRequestSchema = z.object({
  ...withdrawalInputSchema.shape,
  transactionId: transactionIdSchema
    .optional()
    .meta({ description: 'idempotency key; generated when absent' }),
  merchant: withdrawalInputSchema.shape.merchant
    .optional()
    .meta({ description: 'default: the configured merchant' }),
});
export type WithdrawalRequestBody = z.output<typeof withdrawalRequestSchema>;

/**
 * The request a withdrawal is started with, to check whole with withdrawalInputSchema (the Pix
 * key against its type): the body with its transactionId (`transactionId` when it has none) and
 * merchant filled in.
 */
export function withdrawalRequestOf(
  config: Pick<Config, 'PROVIDER_MERCHANT'>,
  body: WithdrawalRequestBody,
  transactionId: string,
): unknown {
  return {
    ...body,
    transactionId: body.transactionId ?? transactionId,
    merchant: body.merchant ?? config.PROVIDER_MERCHANT,
  };
}

/**
 * The merchant a flow records and is tagged with. The default brand's: the one asked, else the
 * environment's (PROVIDER_MERCHANT). Another brand's connector calls name its own account's
 * merchant whatever was asked (activities/deposit.ts, activities/withdrawal.ts), so its flow
 * records that one, as `brandMerchant` reads it; when it cannot (unset, or a brand with no
 * identity-payments account, whose deposits go to a PSP that knows no merchant), the brand's id.
 * Never the environment's: that is the default brand's merchant.
 */
export async function merchantOfFlow(
  config: Pick<Config, 'PROVIDER_MERCHANT'>,
  brand: string,
  asked: string | undefined,
  brandMerchant?: (brand: string) => Promise<string | undefined>,
): Promise<string> {
  if (brand === DEFAULT_BRAND) return asked ?? config.PROVIDER_MERCHANT;
  return (await brandMerchant?.(brand)) ?? brand;
}

/** An onboarding, as its flow takes it. */
export const onboardingRequestSchema = onboardingInputSchema;
