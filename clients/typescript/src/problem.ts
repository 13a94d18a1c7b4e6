import { z } from 'zod';
import type { components } from './generated/schema';

// pixflow answers every error as RFC 9457 problem details (application/problem+json). The
// client throws each as a PixflowProblem, so that a call either gives its answer or throws.

export type Problem = components['schemas']['Problem'];

/** One refused field of a request, by its place: `body.client.cpf`. */
export interface FieldError {
  name: string;
  reason: string;
}

/** What the client needs of a problem; its other members are kept as they are. */
const problemSchema = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string().optional(),
  instance: z.string().optional(),
  invalid_params: z.array(z.object({ name: z.string(), reason: z.string() })).optional(),
});

/** An error answer of pixflow's, thrown by the client call that got it. */
export class PixflowProblem extends Error {
  /** A URI naming the kind of problem: `https://pixflow.dev/problems/validation-error`. */
  readonly type: string;
  readonly title: string;
  /** The HTTP status. */
  readonly status: number;
  /** What went wrong with this request. */
  readonly detail: string | undefined;
  /** The path the problem is about. */
  readonly instance: string | undefined;
  /** Each field the request had wrong (a 400's `invalid_params`); none for other problems. */
  readonly fieldErrors: readonly FieldError[];
  /** The problem as answered, with its other members (flowStatus, reason, verification, missing_scopes…). */
  readonly problem: Problem & Record<string, unknown>;

  constructor(problem: Problem & Record<string, unknown>) {
    super(`${problem.status} ${problem.title}${problem.detail ? `: ${problem.detail}` : ''}`);
    this.name = 'PixflowProblem';
    this.type = problem.type;
    this.title = problem.title;
    this.status = problem.status;
    this.detail = problem.detail;
    this.instance = problem.instance;
    this.fieldErrors = problem.invalid_params ?? [];
    this.problem = problem;
  }
}

/**
 * The problem an error answer carries. An answer without one (a proxy's 502 page) is the problem
 * of its status alone: RFC 9457's `about:blank`, its text as the detail.
 */
export async function problemOf(response: Response): Promise<PixflowProblem> {
  const text = await response.text();
  if (/^application\/problem\+json/i.test(response.headers.get('content-type') ?? '')) {
    const parsed = problemSchema.safeParse(parseJson(text));
    if (parsed.success) return new PixflowProblem(parsed.data as Problem & Record<string, unknown>);
  }
  return new PixflowProblem({
    type: 'about:blank',
    title: response.statusText || `HTTP ${response.status}`,
    status: response.status,
    ...(text ? { detail: text.slice(0, 500) } : {}),
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
