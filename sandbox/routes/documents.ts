import { randomBytes } from 'node:crypto';
import { isValid as isValidCpf } from '@fnando/cpf';
import type { Response } from 'express';
import type { SandboxContext } from '../context';
import { isoNow } from '../context';
import { lookupTestDocument, type TestDocument } from '../test-documents';

// The contract's 400 shapes for documents, per endpoint (KYC and liveness differ).

function isValidDocument(document: string): boolean {
  return /^\d{11}$/.test(document) && isValidCpf(document);
}

/** Sends the KYC error for a document that gets one and returns undefined; otherwise the test document. */
export function kycDocumentOrError(
  ctx: SandboxContext,
  res: Response,
  document: string,
): TestDocument | undefined {
  const at = isoNow(ctx);
  if (!isValidDocument(document)) {
    res.status(400).json({
      statusCode: 400,
      message: 'CPF invalido',
      error: 'INVALID_DOCUMENT',
      document,
      response_at: at,
    });
    return undefined;
  }
  const listed = lookupTestDocument(document);
  const changed = ctx.state.kycChanges.get(document);
  const doc = changed ? { ...listed, kyc: changed } : listed;
  switch (doc.kyc) {
    case 'restricted':
      res.status(400).json(restrictedBody(document));
      return undefined;
    case 'not_found':
      res.status(400).json({
        statusCode: 400,
        message: 'Documento nao encontrado',
        error: 'Bad Request',
        document,
        response_at: at,
      });
      return undefined;
    case 'deceased_or_under_age_error':
      res.status(400).json(deceasedBody());
      return undefined;
    default:
      return doc;
  }
}

/** KYC and liveness answer a document on the restrictive list alike. */
function restrictedBody(document: string) {
  return {
    document,
    statusCode: 400,
    message: 'Documento consta em lista restritiva',
    error: 'RESTRICT_DOCUMENT',
  };
}

function deceasedBody() {
  return {
    statusCode: 400,
    message: ['CPF invalido: titular falecido ou menor de idade'],
    error: 'Bad Request',
  };
}

export function livenessDocumentOrError(
  ctx: SandboxContext,
  res: Response,
  document: string,
): TestDocument | undefined {
  const invalid = (message: string) =>
    res.status(400).json({
      document,
      message,
      code: 'INVALID_DOCUMENT',
      response_at: isoNow(ctx),
      response_token_validation: randomBytes(8).toString('hex'),
    });
  if (!isValidDocument(document)) {
    invalid('CPF invalido');
    return undefined;
  }
  const doc = lookupTestDocument(document);
  switch (doc.kyc) {
    case 'not_found':
      invalid('CPF nao encontrado');
      return undefined;
    case 'restricted':
      res.status(400).json(restrictedBody(document));
      return undefined;
    case 'deceased_or_under_age_error':
    case 'titularfalecido':
    case 'under_18':
      res.status(400).json(deceasedBody());
      return undefined;
    default:
      return doc;
  }
}
