import { z } from 'zod';
import { cpfSchema } from '../contracts/flow-input';
import type { LivenessLink } from '../contracts/onboarding';

// What the flows' request and response schemas (api/<flow>-schemas.ts) are made of. Requests
// reuse the flows' input schemas (one source of truth for validation and for /openapi.json);
// responses mirror the workflow state types and are checked against them at compile time with
// `satisfies`. State reads answer a view of the state: its images (several KB of base64 each)
// are replaced by links to the PNG routes.

// Every request and answer carries an example (`.meta({ example })`): the API reference shows
// them, and test/unit/openapi-document.test.ts parses each with its own schema. The examples
// share one person, one deposit and one moment.

export const CPF = '63401825771';
export const AT = '2026-11-21T14:03:00.000Z';
export const LATER = '2026-11-21T14:33:00.000Z';
export const TXID = '47110815000000000000000000000001';
export const client = { externalId: 'user-4711', cpf: CPF, email: 'ana@example.com', name: 'Ana Souza' };

export const iso = z.string().meta({ description: 'ISO 8601 time' });

export const cpfParamsSchema = z.object({ cpf: cpfSchema });

export const livenessLinkSchema = z.object({
  url: z.string(),
  qrcode: z.string(),
  type: z.enum(['onboarding', 'biometric_identification']),
  issuedAt: iso,
  expiresAt: iso,
}) satisfies z.ZodType<LivenessLink>;

/** What deposits and withdrawals both report of their progress. */
export const moneyFlowProgress = {
  reason: z.string().optional(),
  notifications: z.number().int(),
  inquiries: z.number().int(),
  startedAt: iso,
  updatedAt: iso,
  finishedAt: iso.optional(),
};
