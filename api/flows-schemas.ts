import { z } from 'zod';
import { flowStateSchema, flowStatuses, flowTypeSchema } from '../contracts/events';
import type { FlowType } from '../contracts/flow';
import { cpfSchema } from '../contracts/flow-input';
import { AT, TXID } from './schema-parts';

// What GET /v1/flows takes and answers.

const anyFlowStatus = [...new Set(Object.values(flowStatuses).flat())];
const notAStatus = (value: unknown, type: FlowType | undefined, allowed: readonly string[]) =>
  `${JSON.stringify(value)?.slice(0, 60)} is not a ${type ? `${type} ` : ''}status; one of: ${allowed.join(', ')}`;

export const flowsQuerySchema = z
  .object({
    type: flowTypeSchema.optional(),
    status: z
      .enum(anyFlowStatus as [string, ...string[]], {
        error: (issue) => notAStatus(issue.input, undefined, anyFlowStatus),
      })
      .optional()
      .meta({ description: 'a status of the given `type` (without `type`: of any type)' }),
    cpf: cpfSchema.optional(),
    created_from: z.iso.datetime({ offset: true }).optional().meta({ description: 'inclusive, ISO 8601' }),
    created_to: z.iso.datetime({ offset: true }).optional().meta({ description: 'exclusive, ISO 8601' }),
    cursor: z.string().max(300).optional().meta({ description: 'opaque: the `next` of the previous page' }),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  })
  // A status of another type would only ever match nothing: say so instead of an empty page.
  .superRefine((q, ctx) => {
    if (!q.type || !q.status) return;
    const allowed = flowStatuses[q.type];
    if (!allowed.includes(q.status)) {
      ctx.addIssue({ code: 'custom', path: ['status'], message: notAStatus(q.status, q.type, allowed) });
    }
  });

/** A flow's row, as GET /v1/flows lists it and its events carry it. */
export const flowItemSchema = flowStateSchema;

export const flowPageSchema = z
  .object({
    items: z.array(flowItemSchema),
    next: z.string().nullable().meta({ description: 'cursor of the next page; null on the last one' }),
  })
  .meta({
    id: 'FlowPage',
    example: {
      items: [
        {
          workflowId: `deposit-${TXID}`,
          type: 'deposit',
          businessId: TXID,
          status: 'awaiting_payment',
          cpfHash: '5d41402abc4b2a76b9719d911017c592a1f0e3b7c6d8e9f0a1b2c3d4e5f60718',
          cpfMasked: '***.018.257-**',
          merchant: 'sandbox-merchant',
          amountCentavos: 15_000,
          reason: null,
          details: {},
          createdAt: AT,
          updatedAt: AT,
        },
      ],
      next: null,
    },
  });
