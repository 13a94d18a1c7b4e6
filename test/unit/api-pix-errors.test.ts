import { describe, expect, it } from 'vitest';
import { mapApiPixError, mapTokenError, problemTypeName } from '../../connectors/api-pix/wire/errors';
import {
  BadRequestError,
  NotFoundError,
  ProviderUnavailableError,
  RateLimitedError,
  UnauthorizedError,
} from '../../connectors/errors';

const problem = (tipo: string, status: number, extra: Record<string, unknown> = {}) => ({
  type: `https://pix.bcb.gov.br/api/v2/error/${tipo}`,
  title: tipo,
  status,
  ...extra,
});
const answer = (status: number, body: unknown, retryAfter: string | null = null) => ({
  status,
  body,
  retryAfter,
});

describe('API Pix errors as pixflow error kinds', () => {
  it('reads the spec type name from its URI', () => {
    expect(problemTypeName('https://pix.bcb.gov.br/api/v2/error/CobOperacaoInvalida')).toBe(
      'CobOperacaoInvalida',
    );
    expect(problemTypeName('about:blank')).toBe('about:blank');
  });

  it('a refusal (400) is a non-retryable BAD_REQUEST naming the type and the violated fields', () => {
    const body = problem('CobOperacaoInvalida', 400, {
      detail: 'A requisição não respeita o schema.',
      violacoes: [
        { razao: 'O campo cob.valor.original não respeita o schema.', propriedade: 'cob.valor.original' },
      ],
    });
    const err = mapApiPixError('cob_put', answer(400, body), 0);
    expect(err).toBeInstanceOf(BadRequestError);
    expect(err.retryable).toBe(false);
    expect(err.message).toContain('CobOperacaoInvalida');
    expect(err.status).toBe(400);
    expect((err as BadRequestError).fields).toEqual(['cob.valor.original']);
    expect(err.body).toEqual(body);
  });

  it('every not-found type is NOT_FOUND', () => {
    for (const tipo of [
      'CobNaoEncontrado',
      'PixNaoEncontrado',
      'PixDevolucaoNaoEncontrada',
      'WebhookNaoEncontrado',
      'NaoEncontrado',
    ]) {
      const err = mapApiPixError('pix_get', answer(404, problem(tipo, 404)), 0);
      expect(err, tipo).toBeInstanceOf(NotFoundError);
      expect(err.retryable).toBe(false);
    }
    expect(mapApiPixError('cob_get', answer(410, problem('PermanentementeRemovido', 410)), 0)).toBeInstanceOf(
      NotFoundError,
    );
  });

  it('AcessoNegado and a bare 401 are UNAUTHORIZED', () => {
    expect(mapApiPixError('cob_put', answer(403, problem('AcessoNegado', 403)), 0)).toBeInstanceOf(
      UnauthorizedError,
    );
    expect(mapApiPixError('cob_put', answer(401, ''), 0)).toBeInstanceOf(UnauthorizedError);
  });

  it('5xx and 429 are retryable whatever their body says', () => {
    for (const [status, body] of [
      [503, problem('ServicoIndisponivel', 503)],
      [500, problem('ErroInternoDoServidor', 500)],
      [504, problem('IndisponibilidadePorTempoEsgotado', 504)],
      [502, '<html>bad gateway</html>'],
      [500, problem('CobOperacaoInvalida', 500)],
    ] as const) {
      const err = mapApiPixError('cob_get', answer(status, body), 0);
      expect(err, String(status)).toBeInstanceOf(ProviderUnavailableError);
      expect(err.retryable).toBe(true);
    }
    const limited = mapApiPixError('cob_get', answer(429, '', '7'), 0);
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect((limited as RateLimitedError).retryAfterMs).toBe(7000);
    expect(limited.retryable).toBe(true);
  });

  it('a type the table does not know is read by its status', () => {
    expect(mapApiPixError('cob_put', answer(400, problem('AlgoNovo', 400)), 0)).toBeInstanceOf(
      BadRequestError,
    );
    expect(mapApiPixError('cob_get', answer(404, { message: 'nope' }), 0)).toBeInstanceOf(NotFoundError);
  });

  it('never puts a CPF the PSP quotes in its detail into the message', () => {
    const err = mapApiPixError(
      'cob_put',
      answer(400, problem('CobOperacaoInvalida', 400, { detail: 'devedor.cpf 12345678909 inválido' })),
      0,
    );
    expect(err.message).not.toContain('12345678909');
  });

  it('bad client credentials at the token endpoint are UNAUTHORIZED and say what to fix', () => {
    const err = mapTokenError(answer(401, { error: 'invalid_client' }), 0);
    expect(err).toBeInstanceOf(UnauthorizedError);
    expect(err.message).toMatch(/client credentials/);
    expect(mapTokenError(answer(400, { error: 'invalid_scope' }), 0)).toBeInstanceOf(UnauthorizedError);
    expect(mapTokenError(answer(503, ''), 0)).toBeInstanceOf(ProviderUnavailableError);
  });
});
