import type { Response } from 'express';
import type { z } from 'zod';

// API Pix errors: RFC 7807 bodies (`application/problem+json`) whose `type` is one of the
// Central Bank's `https://pix.bcb.gov.br/api/v2/error/<TipoErro>`, with `violacoes` naming each
// field at fault as the spec's examples do (`cob.valor.original`, `devolucao.valor`).

const ERROR_BASE = 'https://pix.bcb.gov.br/api/v2/error/';

/** The spec's error types this PSP answers, with their status and the spec's title. */
export const PROBLEMS = {
  RequisicaoInvalida: { status: 400, title: 'Requisição inválida.' },
  AcessoNegado: { status: 403, title: 'Acesso Negado' },
  NaoEncontrado: { status: 404, title: 'Não Encontrado' },
  ErroInternoDoServidor: { status: 500, title: 'Erro interno do servidor.' },
  ServicoIndisponivel: { status: 503, title: 'Serviço Indisponível' },
  IndisponibilidadePorTempoEsgotado: { status: 504, title: 'Indisponibilidade por tempo esgotado.' },
  CobNaoEncontrado: { status: 404, title: 'Cobrança não encontrada.' },
  CobOperacaoInvalida: { status: 400, title: 'Cobrança inválida.' },
  CobConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  PixNaoEncontrado: { status: 404, title: 'Pix não encontrado.' },
  PixDevolucaoNaoEncontrada: { status: 404, title: 'Devolução não encontrada.' },
  PixConsultaInvalida: { status: 400, title: 'Consulta inválida.' },
  PixDevolucaoInvalida: { status: 400, title: 'Devolução inválida.' },
  WebhookOperacaoInvalida: { status: 400, title: 'Webhook inválido.' },
  WebhookNaoEncontrado: { status: 404, title: 'Webhook não encontrado.' },
} as const;
export type ProblemType = keyof typeof PROBLEMS;

export interface Violacao {
  razao: string;
  propriedade: string;
  valor?: string;
}

export interface Problema {
  type: string;
  title: string;
  status: number;
  detail: string;
  correlationId?: string;
  violacoes?: Violacao[];
}

export function problemOf(type: ProblemType, detail: string, violacoes: Violacao[] = []): Problema {
  const { status, title } = PROBLEMS[type];
  return {
    type: `${ERROR_BASE}${type}`,
    title,
    status,
    detail,
    ...(violacoes.length > 0 ? { violacoes } : {}),
  };
}

export function sendProblem(res: Response, problem: Problema): void {
  res.status(problem.status).type('application/problem+json').send(JSON.stringify(problem));
}

export function sendTyped(
  res: Response,
  type: ProblemType,
  detail: string,
  violacoes: Violacao[] = [],
): void {
  sendProblem(res, problemOf(type, detail, violacoes));
}

/**
 * A 401: the spec defines no error type for OAuth (RFC 6750 answers it), so the body is RFC
 * 7807's `about:blank` and the header says which token error it is.
 */
export function sendUnauthorized(res: Response, detail: string, error?: 'invalid_token'): void {
  res.set(
    'www-authenticate',
    `Bearer realm="api-pix"${error ? `, error="${error}", error_description="${detail}"` : ''}`,
  );
  sendProblem(res, { type: 'about:blank', title: 'Unauthorized', status: 401, detail });
}

/** One violation per zod issue, its property prefixed the way the spec names it (`cob.`). */
export function violationsOf(error: z.ZodError, prefix: string): Violacao[] {
  return error.issues.map((issue) => {
    const field = issue.path.map(String).join('.');
    return {
      razao: `O campo ${[prefix, field].filter(Boolean).join('.') || 'corpo'} não respeita o schema: ${issue.message}`,
      propriedade: [prefix, field].filter(Boolean).join('.') || prefix,
    };
  });
}
