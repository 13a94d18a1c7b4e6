import type { Config } from '../common/config';
import { maskCpf } from '../common/mask';
import { cpfHash } from '../common/pii';
import { sealSecret } from '../common/secret-box';
import { type EligibilityRecord, eligibilityOfHash, recordEligibility } from '../db/eligibility';
import type { Pool } from '../db/pool';
import type { EligibilityPurpose, ImpededReason } from '../eligibility/contract';
import {
  type EligibilityRegistry,
  EligibilityUnavailableError,
  httpEligibilityRegistry,
} from '../eligibility/registry';
import type { PolicyReader } from '../policy/schema';

// Whether the registry of impeded people bars a person (docs/rules.md, Eligibility): its last answer
// while fresh, else the registry asked again, and every answer recorded on the person's row (an
// impeded one with a `customer.impeded` event). A recorded impediment stays, whatever the registry
// answers later, until an operator reinstates the person. Only the keyed hash, the masked CPF and
// the CPF sealed with the codec keys (for the rescreening to ask again) are kept. Shared by a
// deposit's screening (activities/deposit-screening.ts) and the rescreening's batches.

export type Screening =
  | { status: 'eligible' }
  | {
      status: 'impeded';
      reason: ImpededReason;
      since: string;
      until: string | null;
      source: string;
    }
  | { status: 'unavailable'; error: string };

export interface Screener {
  registry: EligibilityRegistry;
  pool: Pool;
  /** Keyed CPF hash (common/pii.ts with the configured key). */
  hashCpf: (cpf: string) => string;
  /** The rules in force: how long an answer is reused (eligibility.freshMs). */
  policy: PolicyReader;
  /** Seals the CPF kept on the person's row for the rescreening (common/secret-box.ts). */
  sealCpf?: (cpf: string) => string;
}

const registries = new WeakMap<Config, EligibilityRegistry>();

/** The registry the configuration names (one per configuration), or none when it names none. */
export function eligibilityRegistryOf(config: Config): EligibilityRegistry | undefined {
  if (!config.ELIGIBILITY_URL) return undefined;
  let registry = registries.get(config);
  if (!registry) {
    registry = httpEligibilityRegistry({
      url: config.ELIGIBILITY_URL,
      secret: config.ELIGIBILITY_SECRET,
      timeoutMs: config.ELIGIBILITY_TIMEOUT_MS,
    });
    registries.set(config, registry);
  }
  return registry;
}

/**
 * What screening a person needs: the configuration's registry (none when it names none: no one is
 * screened) and the policy in force.
 */
export function screenerOf(config: Config, pool: Pool, policy: PolicyReader): Screener | undefined {
  const registry = eligibilityRegistryOf(config);
  if (!registry) return undefined;
  return {
    registry,
    pool,
    hashCpf: (cpf) => cpfHash(cpf, config.PII_HASH_KEY),
    policy,
    sealCpf: (cpf) => sealSecret(config.codecKeys, cpf),
  };
}

/** Asks about the person, or reuses a fresh answer; a registry that gives none is `unavailable`. */
export async function screenPerson(
  s: Screener,
  cpf: string,
  purpose: EligibilityPurpose,
  now = new Date(),
  /** The person's last answer, when the caller has just read it. */
  known?: { last: EligibilityRecord | undefined },
): Promise<Screening> {
  const hash = s.hashCpf(cpf);
  const last = known ? known.last : await eligibilityOfHash(s.pool, hash);
  // A bar whose end has passed is asked about again, however fresh.
  const lapsed =
    last?.registryAnswer === 'impeded' && last.impeded?.until
      ? Date.parse(last.impeded.until) <= now.getTime()
      : false;
  const { freshMs } = (await s.policy.current()).policy.eligibility;
  if (last && !lapsed && now.getTime() - last.checkedAt.getTime() < freshMs) {
    if (!last.impeded) return { status: 'eligible' };
    return { status: 'impeded', ...last.impeded, reason: last.impeded.reason as ImpededReason };
  }
  let answer: Awaited<ReturnType<EligibilityRegistry['check']>>;
  try {
    answer = await s.registry.check(cpf, purpose);
  } catch (err) {
    if (err instanceof EligibilityUnavailableError) return { status: 'unavailable', error: err.message };
    throw err;
  }
  const at = new Date();
  await recordEligibility(s.pool, {
    cpfHash: hash,
    cpfMasked: maskCpf(cpf),
    ...(s.sealCpf ? { cpfSealed: s.sealCpf(cpf) } : {}),
    status: answer.status,
    reason: answer.status === 'impeded' ? answer.reason : null,
    until: answer.status === 'impeded' ? (answer.until ?? null) : null,
    source: `registry:${purpose}`,
    at,
  });
  const recorded = (await eligibilityOfHash(s.pool, hash))?.impeded;
  // Eligible again, the recorded impediment still holds until an operator reinstates the person.
  if (answer.status === 'eligible' && !recorded) return answer;
  return {
    status: 'impeded',
    reason: (answer.status === 'impeded' ? answer.reason : recorded?.reason) as ImpededReason,
    since: recorded?.since ?? at.toISOString(),
    until: answer.status === 'impeded' ? (answer.until ?? null) : (recorded?.until ?? null),
    source: recorded?.source ?? `registry:${purpose}`,
  };
}
