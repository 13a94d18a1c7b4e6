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

/**
 * An OAuth error body (RFC 6749 §5.2), which a token endpoint may answer instead of the shapes
 * above: `invalid_client` (and `unauthorized_client`) means the client credentials were refused.
 */
export const oauthErrorSchema = z.looseObject({
  error: z.string(),
  error_description: z.string().optional(),
});

export const refusedCredentialsErrors: readonly string[] = ['invalid_client', 'unauthorized_client'];

// The deceased-or-under-age body ({statusCode: 400, message: string[], error: 'Bad Request'}) is
// exactly the shape of a NestJS request-validation error, so its words, not its shape, tell them
// apart. A validation error must never be read as a statement about the person.

/** The KYC and liveness request fields (the path's document included) a validation message may name. */
export const requestFields: readonly string[] = [
  'correlation_id',
  'correlationId',
  'plan',
  'event',
  'redirectUrl',
  'document',
];

/** What class-validator, zod and their kin say of a request field. */
const validatorWords =
  /should not be empty|should not exist|must be\b|must not be|must match|must contain|is not allowed|not allowed|is required|\brequired\b|is missing|\bexpected\b|unrecognized key|invalid (input|option|type|value)/i;

/** `property x should not exist` (NestJS's whitelist) or a leading `x:` / `x should|must|is ...`. */
const leadingField =
  /^(?:property\s+)?([A-Za-z_][\w.]*(?:\[\d+\])?)(?=\s*:|\s+(?:should|must|is|has|not|expected|each)\b)/;

/** A statement about the document's holder: CPF, death, age. */
const personWords =
  /\bcpf\b|[óo]bito|falecid|deceased|\bdeath\b|\bdead\b|\bmenor\b|\bidade\b|\bage\b|under[\s-]?age|\bunder\b|\bminor\b/i;

export type MessageReading =
  /** A refusal of the request: `fields` names the request fields it mentions. */
  | { kind: 'validation'; fields: string[] }
  /** A statement about the document's holder (deceased, under age). */
  | { kind: 'person' }
  | { kind: 'other' };

function namedFields(item: string, known: readonly string[]): string[] {
  return known.filter((field) => new RegExp(`(^|[^\\w])${field}([^\\w]|$)`).test(item));
}

/**
 * Reads a 400's `message` (an array of texts, or one text). Validation first: any item that reads
 * like a validator's message, or names a request field without speaking of the person, makes the
 * whole answer a refusal of the request. Only then may the texts speak of the document's holder.
 */
export function readErrorMessages(
  message: string | readonly string[],
  known: readonly string[] = requestFields,
): MessageReading {
  const items = typeof message === 'string' ? [message] : message;
  const fields = new Set<string>();
  let validation = false;
  for (const item of items) {
    const leading = leadingField.exec(item.trim())?.[1];
    const named = namedFields(item, known);
    const validatorLike = validatorWords.test(item) || /^property\s/i.test(item.trim());
    if (validatorLike || (named.length > 0 && !personWords.test(item))) {
      validation = true;
      for (const field of named) fields.add(field);
      if (leading && validatorLike) fields.add(leading);
    }
  }
  if (validation) return { kind: 'validation', fields: [...fields] };
  if (items.length > 0 && items.some((item) => personWords.test(item))) return { kind: 'person' };
  return { kind: 'other' };
}
