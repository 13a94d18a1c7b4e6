import { maskCpfsIn } from '../../../common/mask';
import {
  BadRequestError,
  NotFoundError,
  type ProviderError,
  ProviderUnavailableError,
  parseRetryAfter,
  RateLimitedError,
  UnauthorizedError,
} from '../../errors';
import { type EndpointName, type Problem, problemSchema } from './schemas';

// The API Pix's errors (RFC 7807 bodies whose `type` is https://pix.bcb.gov.br/api/v2/error/<Tipo>)
// as pixflow's error kinds. The spec's list, with what each means to a caller:
// - not found (404/410): NaoEncontrado, PermanentementeRemovido, CobNaoEncontrado,
//   PixNaoEncontrado, PixDevolucaoNaoEncontrada, WebhookNaoEncontrado;
// - a refusal of what was asked (400), never retried: RequisicaoInvalida, CobOperacaoInvalida,
//   CobConsultaInvalida, PixConsultaInvalida, PixDevolucaoInvalida, WebhookOperacaoInvalida,
//   WebhookConsultaInvalida;
// - access (403): AcessoNegado, a token without the scope or a product not contracted; asked
//   once more with a fresh token by the transport, then UNAUTHORIZED;
// - the PSP unavailable (500/503/504): ErroInternoDoServidor, ServicoIndisponivel,
//   IndisponibilidadePorTempoEsgotado, retried.
// A type the table does not know is read by its HTTP status, as RFC 7807 allows.

export const PROBLEM_TYPE_BASE = 'https://pix.bcb.gov.br/api/v2/error/';

type ProblemKind = 'not_found' | 'refused' | 'access' | 'unavailable';

export const PROBLEM_TYPES: Readonly<Record<string, ProblemKind>> = {
  RequisicaoInvalida: 'refused',
  AcessoNegado: 'access',
  NaoEncontrado: 'not_found',
  PermanentementeRemovido: 'not_found',
  ErroInternoDoServidor: 'unavailable',
  ServicoIndisponivel: 'unavailable',
  IndisponibilidadePorTempoEsgotado: 'unavailable',
  CobNaoEncontrado: 'not_found',
  CobOperacaoInvalida: 'refused',
  CobConsultaInvalida: 'refused',
  PixNaoEncontrado: 'not_found',
  PixDevolucaoNaoEncontrada: 'not_found',
  PixConsultaInvalida: 'refused',
  PixDevolucaoInvalida: 'refused',
  WebhookOperacaoInvalida: 'refused',
  WebhookNaoEncontrado: 'not_found',
  WebhookConsultaInvalida: 'refused',
};

/** The problem's type name (`CobOperacaoInvalida`) from its URI; the URI itself when not the spec's. */
export function problemTypeName(type: string): string {
  return type.startsWith(PROBLEM_TYPE_BASE) ? type.slice(PROBLEM_TYPE_BASE.length) : type;
}

/** The body as the spec's Problema, or undefined when it is something else. */
export function readProblem(body: unknown): Problem | undefined {
  const parsed = problemSchema.safeParse(body);
  return parsed.success ? parsed.data : undefined;
}

function kindOfStatus(status: number): ProblemKind | 'rate_limited' {
  if (status === 404 || status === 410) return 'not_found';
  if (status === 401 || status === 403) return 'access';
  if (status === 429) return 'rate_limited';
  if (status === 408 || status >= 500) return 'unavailable';
  return 'refused';
}

/** The request properties the problem's violations name (`cob.valor.original` and the like). */
function violatedProperties(problem: Problem | undefined): string[] {
  return (problem?.violacoes ?? [])
    .map((v) => v.propriedade)
    .filter((p): p is string => typeof p === 'string' && p.length > 0);
}

export interface ErrorAnswer {
  status: number;
  body: unknown;
  retryAfter: string | null;
}

/**
 * A non-2xx answer as pixflow's error kind. The message names the endpoint, the problem's type
 * and its detail; `body` keeps the problem as received. A 401 or 403 here is after the transport
 * already asked once more with a fresh token.
 */
export function mapApiPixError(endpoint: EndpointName, res: ErrorAnswer, now: number): ProviderError {
  const problem = readProblem(res.body);
  const typeName = problem ? problemTypeName(problem.type) : undefined;
  const known = typeName === undefined ? undefined : PROBLEM_TYPES[typeName];
  // The status decides 429 and 5xx whatever the type says: trying again is what helps.
  const byStatus = kindOfStatus(res.status);
  const kind = byStatus === 'rate_limited' || byStatus === 'unavailable' ? byStatus : (known ?? byStatus);
  // The PSP's free text may quote what was sent, a CPF among it: masked before it reaches a log.
  const detail = maskCpfsIn(problem?.detail ?? problem?.title ?? '');
  const message = `api-pix ${endpoint}: ${typeName ?? 'HTTP error'} (HTTP ${res.status})${detail ? `: ${detail}` : ''}`;
  const details = { status: res.status, body: res.body, endpoint };
  switch (kind) {
    case 'not_found':
      return new NotFoundError(message, details);
    case 'access':
      return new UnauthorizedError(message, details);
    case 'rate_limited':
      return new RateLimitedError(message, {
        ...details,
        retryAfterMs: parseRetryAfter(res.retryAfter, now),
      });
    case 'unavailable':
      return new ProviderUnavailableError(message, details);
    case 'refused':
      return new BadRequestError(message, { ...details, fields: violatedProperties(problem) });
  }
}

/** The token endpoint's refusals (RFC 6749 §5.2): bad client credentials are said as such. */
export function mapTokenError(res: ErrorAnswer, now: number): ProviderError {
  const details = { status: res.status, body: res.body, endpoint: 'token' };
  const oauthError =
    res.body && typeof res.body === 'object' && 'error' in res.body
      ? String((res.body as { error: unknown }).error)
      : undefined;
  if (
    res.status === 401 ||
    oauthError === 'invalid_client' ||
    oauthError === 'unauthorized_client' ||
    oauthError === 'invalid_scope'
  ) {
    return new UnauthorizedError(
      `api-pix token: the PSP refused the client credentials or scopes (HTTP ${res.status}${oauthError ? `, ${oauthError}` : ''}): an operator must fix the client id, secret or certificate`,
      details,
    );
  }
  return mapApiPixError('token', res, now);
}
