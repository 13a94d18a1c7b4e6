import { z } from 'zod';
import {
  OPEN_POINT_IDS,
  OPEN_POINTS,
  type OpenPointId,
  type Side,
} from '../connectors/identity-payments/open-points';

// The sandbox's dialect: which side of each point the provider's document leaves open it answers
// (connectors/identity-payments/open-points.ts). Every route asks `sideOf` and answers that side
// strictly, refusing the other side's form where the point says so, so a client that picks wrong
// fails against the sandbox as it would against the provider.

export type { OpenPointId, Side };

/** Every point on `default`, except those `points` names. */
export interface Dialect {
  default: Side;
  points: Partial<Record<OpenPointId, Side>>;
}

export const DOC_DIALECT: Dialect = { default: 'doc', points: {} };

const SIDES = ['doc', 'other'] as const satisfies readonly Side[];
const sideSchema = z.enum(SIDES, { error: 'must be doc or other' });
const isOpenPointId = (id: string): id is OpenPointId => (OPEN_POINT_IDS as string[]).includes(id);
const unknownPoint = (id: string) => `unknown open point "${id}" (known: ${OPEN_POINT_IDS.join(', ')})`;

/** A dialect as `PUT /sandbox/dialect` takes it: `{default?, points?}`, every point id known. */
export const dialectSchema = z
  .object({
    default: sideSchema.default('doc'),
    points: z
      .record(z.string(), sideSchema)
      .default({})
      .superRefine((points, check) => {
        for (const id of Object.keys(points)) {
          if (!isOpenPointId(id)) check.addIssue({ code: 'custom', path: [id], message: unknownPoint(id) });
        }
      }),
  })
  .strict();

export class DialectError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DialectError';
  }
}

/**
 * The dialect `setting` names (SANDBOX_DIALECT as common/config.ts parses it, or a caller's
 * options), or a DialectError naming the first point id no open point has.
 */
export function dialectOf(setting: { default: Side; points: Record<string, Side> }): Dialect {
  const points: Dialect['points'] = {};
  for (const [id, side] of Object.entries(setting.points)) {
    if (!isOpenPointId(id)) throw new DialectError(unknownPoint(id));
    if (!SIDES.includes(side))
      throw new DialectError(`open point "${id}": side "${side}" is not doc or other`);
    points[id] = side;
  }
  if (!SIDES.includes(setting.default))
    throw new DialectError(`side "${setting.default}" is not doc or other`);
  return { default: setting.default, points };
}

/** The side `dialect` answers for `point`. */
export function sideIn(dialect: Dialect, point: OpenPointId): Side {
  return dialect.points[point] ?? dialect.default;
}

/** The side the running sandbox (its context) answers for `point` now. */
export function sideOf(ctx: { state: { dialect: Dialect } }, point: OpenPointId): Side {
  return sideIn(ctx.state.dialect, point);
}

/** Every point's side under `dialect` (what `GET /sandbox/dialect` shows). */
export function sidesOf(dialect: Dialect): Record<OpenPointId, Side> {
  return Object.fromEntries(OPEN_POINT_IDS.map((id) => [id, sideIn(dialect, id)])) as Record<
    OpenPointId,
    Side
  >;
}

/** The sandbox's status words in inquiries, by side (`inquiry.status`). */
export const INQUIRY_STATUS_WORDS = {
  processing: { doc: 'processing', other: 'ATIVA' },
  completed: { doc: 'completed', other: 'CONCLUIDA' },
  failed: { doc: 'failed', other: 'REJEITADA' },
  expired: { doc: 'expired', other: 'EXPIRADA' },
} as const satisfies Record<string, Record<Side, string>>;

export type InquiryStatus = keyof typeof INQUIRY_STATUS_WORDS;

const cell = (text: string) => text.replace(/\|/g, '\\|');

/**
 * docs/sandbox.md's dialect tables, from OPEN_POINTS and the status words above:
 * test/sandbox/dialect-doc.test.ts fails while the page says otherwise.
 */
export function dialectTables(): string {
  const points = OPEN_POINT_IDS.map((id) => {
    const p = OPEN_POINTS[id];
    return `| \`${id}\` | ${cell(p.question)} | ${cell(p.doc)} | ${cell(p.other)} |`;
  });
  const words = (Object.keys(INQUIRY_STATUS_WORDS) as InquiryStatus[]).map((s) => {
    const w = INQUIRY_STATUS_WORDS[s];
    return `| ${s} | \`${w.doc}\` | \`${w.other}\` |`;
  });
  return [
    '| point | the document | `doc` (the default) | `other` |',
    '|---|---|---|---|',
    ...points,
    '',
    'Inquiry status words (`inquiry.status`), for every state the sandbox has:',
    '',
    '| state | `doc` | `other` |',
    '|---|---|---|',
    ...words,
  ].join('\n');
}
