import { Problem } from '../http/problem';
import type { Refused } from '../starters/types';

// What every flow's routes answer alike.

export const flowNotFound = (what: string) =>
  new Problem(404, 'flow-not-found', 'Flow not found', `no ${what}`);

/** 409: the request differs from the one that created the flow. */
export const conflict = (reason: string) =>
  new Problem(409, 'conflict', 'Conflicts with the existing flow', reason);

/**
 * 409: the rules refused it, inside its flow (docs/rules.md, "How a refusal is answered"): its
 * type, the reason code, the rules' version it was decided under, the flow that keeps the
 * refusal, and what the caller acts on.
 */
export const refusedProblem = (
  r: Refused<unknown>,
  said: { type: string; title: string; detail: string; fields: Record<string, unknown> },
) =>
  new Problem(409, said.type, said.title, said.detail, {
    reason: r.reason,
    policyVersion: r.policyVersion,
    brandPolicyVersion: r.brandPolicyVersion,
    workflowId: r.workflowId,
    ...said.fields,
  });

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/**
 * The PNG bytes of a QR code as a flow keeps it (a `data:image/png;base64,` URL, or bare base64
 * of a PNG), or undefined when it is not one: the PNG routes serve only what is a PNG.
 */
export function pngBytes(image: string | undefined): Buffer | undefined {
  if (!image) return undefined;
  const bytes = Buffer.from(image.replace(/^data:image\/png;base64,/, ''), 'base64');
  return bytes.subarray(0, 8).equals(PNG_SIGNATURE) ? bytes : undefined;
}
