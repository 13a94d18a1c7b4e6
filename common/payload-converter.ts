import { defaultPayloadConverter, type Payload, type PayloadConverter } from '@temporalio/common';

// What pixflow's worker gives another namespace's workflows through Nexus (docs/nexus.md) must
// read without pixflow's codec key: the caller's workers hold no pixflow key, which would also
// open the personal data pixflow seals. The codec (common/codec.ts) seals every payload but those
// this converter marks: a value marked `inTheClear` carries no personal data and goes as JSON;
// a value given a public part goes as that part's JSON, and whole, sealed, beside it. Loaded in
// the workflow sandbox too (the worker's bundle): @temporalio/common only.

/** Set on a value by `inTheClear`, or to its public part by `withPublicPart`. */
const CLEAR = Symbol.for('pixflow.payload.clear');
/** Metadata: the codec leaves this payload's data unsealed (the codec removes the mark). */
export const CLEAR_METADATA = 'pixflow-clear';
/** Metadata: the whole value's JSON, which the codec seals into SEALED_WHOLE_METADATA. */
export const WHOLE_METADATA = 'pixflow-whole';
/** Metadata: the whole value, sealed: pixflow's codec reads it back in place of the data. */
export const SEALED_WHOLE_METADATA = 'pixflow-sealed';

const text = new TextEncoder();

type Marked = { [CLEAR]?: unknown };

/** Marks a value that carries no personal data: its payload is not sealed. Answers the value. */
export function inTheClear<T extends object>(value: T): T {
  Object.defineProperty(value, CLEAR, { value, enumerable: false, configurable: true });
  return value;
}

/**
 * Marks a value whose payload is `part` in the clear and the value whole, sealed, beside it:
 * pixflow's clients read the whole value, anyone else the part. Answers the value.
 */
export function withPublicPart<T extends object>(value: T, part: object): T {
  Object.defineProperty(value, CLEAR, { value: part, enumerable: false, configurable: true });
  return value;
}

export class PixflowPayloadConverter implements PayloadConverter {
  toPayload<T>(value: T): Payload {
    const part = value !== null && typeof value === 'object' ? (value as Marked)[CLEAR] : undefined;
    if (part === undefined) return defaultPayloadConverter.toPayload(value);
    const clear = defaultPayloadConverter.toPayload(part);
    const metadata = { ...clear.metadata, [CLEAR_METADATA]: text.encode('1') };
    if (part === value) return { metadata, data: clear.data };
    const whole = defaultPayloadConverter.toPayload(value);
    return { metadata: { ...metadata, [WHOLE_METADATA]: whole.data ?? new Uint8Array() }, data: clear.data };
  }

  fromPayload<T>(payload: Payload): T {
    return defaultPayloadConverter.fromPayload(payload);
  }
}

export const payloadConverter = new PixflowPayloadConverter();
