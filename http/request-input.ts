import type { z } from 'zod';
import { Problem, type RequestPart, validationProblem } from './problem';

export type { RequestPart };

// NUL is refused by Postgres text and jsonb, and a lone surrogate is not Unicode (UTF-8 cannot
// carry it): no field may hold either, whatever its schema allows.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const illFormed = (s: string) => s.includes('\u0000') || LONE_SURROGATE.test(s);

/** The path of the first string in `value` that holds NUL or a lone surrogate (iterative: any depth). */
export function illFormedTextPath(value: unknown): string[] | undefined {
  const stack: { v: unknown; path: string[] }[] = [{ v: value, path: [] }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    if (typeof item.v === 'string') {
      if (illFormed(item.v)) return item.path;
    } else if (item.v && typeof item.v === 'object') {
      const entries = Object.entries(item.v);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [k, v] = entries[i] as [string, unknown];
        stack.push({ v, path: [...item.path, k] });
      }
    }
  }
  return undefined;
}

/**
 * Parses one part of the request or throws a 400 problem naming each bad field (body.client.cpf;
 * `input.client.cpf` for a Nexus operation's input).
 * The text check reads what the schema kept: properties it does not know are dropped unread, as
 * the API's document says (it allows them), whatever they hold.
 */
export function parse<S extends z.ZodType>(schema: S, where: RequestPart, value: unknown): z.output<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw validationProblem(where, r.error);
  const bad = illFormedTextPath(r.data);
  if (bad) {
    const name = [where, ...bad].join('.');
    const reason = 'must be well-formed text without NUL characters';
    throw new Problem(400, 'validation-error', 'Request validation failed', `${name}: ${reason}`, {
      invalid_params: [{ name, reason }],
    });
  }
  return r.data;
}
