import { Router } from 'express';
import { brandOf } from '../api-keys/authenticate';
import { cpfHash } from '../common/pii';
import { type FlowCursor, listFlows } from '../db/flows';
import { type Operation, route } from '../http/operation';
import { Problem } from '../http/problem';
import { illFormedTextPath, parse } from '../http/request-input';
import type { ApiDeps } from './deps';
import { flowPageSchema, flowsQuerySchema } from './flows-schemas';

// The cursor is opaque to callers: base64url of the last row's position in the keyset order.
const encodeCursor = (c: FlowCursor) =>
  Buffer.from(JSON.stringify([c.createdUs, c.workflowId])).toString('base64url');

function decodeCursor(s: string): FlowCursor {
  try {
    const v: unknown = JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));
    // Only what encodeCursor can have written: a workflow id is never empty, NUL or ill-formed
    // (Postgres refuses those: a forged cursor must be a 400, not a 500).
    if (
      Array.isArray(v) &&
      Number.isSafeInteger(v[0]) &&
      typeof v[1] === 'string' &&
      v[1].length > 0 &&
      !illFormedTextPath(v[1])
    ) {
      return { createdUs: v[0], workflowId: v[1] };
    }
  } catch {}
  throw new Problem(
    400,
    'validation-error',
    'Request validation failed',
    'query.cursor: is not a valid cursor',
    {
      invalid_params: [{ name: 'query.cursor', reason: 'is not a valid cursor' }],
    },
  );
}

/** The flow list, as /openapi.json describes it. */
export const flowOperations = {
  list: {
    operationId: 'listFlows',
    method: 'get',
    path: '/flows',
    tag: 'Flows',
    summary: 'List flows, newest first, with filters and a cursor',
    description:
      "The acting brand's deposits and withdrawals only (Pixflow-Brand), and the onboardings and biometric identifications of the people it has met (by starting their onboarding): a person's verification is shared by an operator's brands, the person shown only to those that know them. A status that the given type (or, without type, no flow type) has is a 400 listing the allowed ones.",
    query: flowsQuerySchema,
    ok: [{ status: 200, description: 'One page', schema: flowPageSchema }],
    // Lists every flow type, whatever its filters: it reads what each of the three reads.
    scopes: ['onboardings:read', 'deposits:read', 'withdrawals:read'],
  },
} satisfies Record<string, Operation>;

export function flowRoutes({ config, pool }: ApiDeps) {
  const r = Router();
  route(r, flowOperations.list, async (req, res) => {
    const q = parse(flowsQuerySchema, 'query', req.query);
    const page = await listFlows(pool, {
      brand: brandOf(res),
      type: q.type,
      status: q.status,
      // The table holds only the keyed hash of a CPF.
      cpfHash: q.cpf ? cpfHash(q.cpf, config.PII_HASH_KEY) : undefined,
      createdFrom: q.created_from ? new Date(q.created_from) : undefined,
      createdTo: q.created_to ? new Date(q.created_to) : undefined,
      after: q.cursor ? decodeCursor(q.cursor) : undefined,
      limit: q.limit,
    });
    res.json({ items: page.items, next: page.next ? encodeCursor(page.next) : null });
  });
  return r;
}
