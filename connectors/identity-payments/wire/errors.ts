import { z } from 'zod';

// The provider's error bodies. The 400 bodies tell document errors apart (the transport turns each
// into its typed error); a 404 (inquiry) needs no schema, its status says it all.

/** Deceased holder or under age (KYC and liveness). */
export const deceasedOrUnderAgeErrorSchema = z.looseObject({
  statusCode: z.literal(400),
  message: z.array(z.string()),
  error: z.literal('Bad Request'),
});

/** Invalid CPF (KYC). */
export const kycInvalidDocumentErrorSchema = z.looseObject({
  statusCode: z.literal(400),
  message: z.string(),
  error: z.literal('INVALID_DOCUMENT'),
  document: z.string(),
  response_at: z.string(),
});

/** Invalid CPF or not found (liveness). */
export const livenessInvalidDocumentErrorSchema = z.looseObject({
  document: z.string(),
  message: z.string(),
  code: z.literal('INVALID_DOCUMENT'),
  response_at: z.string(),
  response_token_validation: z.string(),
});

/** Document not found (KYC). */
export const documentNotFoundErrorSchema = z.looseObject({
  statusCode: z.literal(400),
  message: z.string(),
  error: z.literal('Bad Request'),
  document: z.string(),
  response_at: z.string(),
});

/** Document on the restrictive list (KYC and liveness). */
export const restrictDocumentErrorSchema = z.looseObject({
  document: z.string(),
  statusCode: z.literal(400),
  message: z.string(),
  error: z.literal('RESTRICT_DOCUMENT'),
});

/**
 * Error body for everything the contract leaves "not shown" (token, deposit, withdrawal, receipt,
 * 401, 409, 429, 5xx): the sandbox's choice, modelled on the contract's own 400 shapes.
 */
export const genericErrorSchema = z.looseObject({
  statusCode: z.number().int(),
  message: z.union([z.string(), z.array(z.string())]),
  error: z.string(),
});
