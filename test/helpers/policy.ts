import type { Policy } from '../../policy/schema';
import { defaultPolicy } from '../../policy/seed';

export { defaultPolicy };

/** A section of the policy, some of its fields given. */
export type PolicyOverrides = { [S in keyof Policy]?: Partial<Policy[S]> };

/** The default policy (or `base`) with `over` laid on each of its sections. */
export function policyWith(over: PolicyOverrides, base: Policy = defaultPolicy()): Policy {
  const out = structuredClone(base) as Record<string, Record<string, unknown>>;
  for (const [section, fields] of Object.entries(over)) Object.assign(out[section] as object, fields);
  return out as unknown as Policy;
}
