import type { Logger } from '../common/logger';
import {
  latestBrandPolicyVersions,
  latestPolicyVersion,
  listenForPolicy,
  seedPolicyVersion,
} from '../db/policy';
import type { Pool } from '../db/pool';
import { type BrandPolicyVersion, brandPolicyInForce, checkedOverrides } from './brand';
import { checkedPolicy, diffPolicies } from './diff';
import type { Policy, PolicyInForce, PolicyReader } from './schema';

// The policy every process decides with (docs/policy.md): the newest version in Postgres, kept
// in memory. A new version is announced (NOTIFY pixflow_policy) and read at once; a reconnect
// reads again, and so does a periodic look, in case a notification was lost. Until Postgres has
// answered once, a decision waits for it (or fails as Postgres unavailable): a process never
// decides under rules no version holds. Each brand's overrides (policy/brand.ts) are read with the
// operator's version, on the same notifications, and laid on it when a brand's policy is asked.

export interface PolicyStore extends PolicyReader {
  /** Reads the newest version now (what a notification does). */
  refresh(): Promise<PolicyInForce>;
  /** Whether it listens for new versions (else the periodic look alone brings them). */
  listening(): boolean;
  close(): Promise<void>;
}

export interface PolicyStoreOptions {
  pool: Pool;
  /** Version 1 when the table is empty: the environment's rules (policy/seed.ts). */
  seed: Policy;
  log: Logger;
  /** The fallback look for a new version, ms. */
  refreshMs?: number;
}

/** Each brand's newest overrides, read with the operator's version, laid on it when a brand asks. */
function brandLayer() {
  /** Each brand's newest overrides, or why they cannot be read (its decisions then fail). */
  let brands = new Map<string, BrandPolicyVersion | Error>();
  /** Each brand's policy in force, laid once per pair of versions. */
  const laid = new Map<string, PolicyInForce>();
  return {
    async read(pool: Pool): Promise<void> {
      const next = new Map<string, BrandPolicyVersion | Error>();
      for (const b of await latestBrandPolicyVersions(pool)) {
        try {
          next.set(b.brand, { brand: b.brand, version: b.version, overrides: checkedOverrides(b.overrides) });
        } catch (err) {
          const problem = `brand ${b.brand}'s policy version ${b.version}: ${(err as Error).message}`;
          next.set(b.brand, new Error(problem));
        }
      }
      brands = next;
    },
    /** The brand's policy: the operator's in force with the brand's newest overrides on it. */
    of(operator: PolicyInForce, brand: string | undefined): PolicyInForce {
      const own = brand === undefined ? undefined : brands.get(brand);
      if (own instanceof Error) throw own;
      if (!own) return operator;
      const key = `${own.brand}\n${operator.version}\n${own.version}`;
      let brandInForce = laid.get(key);
      if (!brandInForce) {
        brandInForce = brandPolicyInForce(operator, own);
        if (laid.size > 1_000) laid.clear();
        laid.set(key, brandInForce);
      }
      return brandInForce;
    },
  };
}

/**
 * Seeds version 1 if there is none and keeps the version in force: read at start (again every
 * refreshMs until Postgres answers), on each notification, on each reconnect, every refreshMs.
 */
export function startPolicyStore({ pool, seed, log, refreshMs = 5_000 }: PolicyStoreOptions): PolicyStore {
  const seedPolicy = checkedPolicy(seed);
  let inForce: PolicyInForce | undefined;
  const brands = brandLayer();
  let seeded = false;
  // Reads run one after another, each started after the one before it ended: a notification
  // that comes during a read is answered by a read that sees its version.
  let reads: Promise<unknown> = Promise.resolve();

  async function read(): Promise<PolicyInForce> {
    if (!seeded) {
      if (await seedPolicyVersion(pool, seedPolicy, 'seeded from the environment'))
        log.info({ policyVersion: 1 }, 'rules policy seeded from the environment');
      seeded = true;
    }
    const [row] = await Promise.all([latestPolicyVersion(pool), brands.read(pool)]);
    if (!row) throw new Error('the rules policy has no version');
    return { version: row.version, policy: checkedPolicy(row.policy) };
  }

  /** Reads the newest version; a version never goes back. */
  function refresh(): Promise<PolicyInForce> {
    const next = reads.then(async () => {
      const latest = await read();
      if (!inForce) {
        // Said once a start: rule variables changed after version 1 change nothing.
        const differs = diffPolicies(seedPolicy, latest.policy).map((c) => c.path);
        if (differs.length)
          log.warn(
            { policyVersion: latest.version, fields: differs },
            'the environment seeds only the first rules policy version: its rule variables differ from the version in force, which applies (change the policy instead, docs/policy.md)',
          );
      }
      if (!inForce || latest.version > inForce.version) {
        if (inForce)
          log.info({ policyVersion: latest.version, was: inForce.version }, 'rules policy changed');
        inForce = latest;
      }
      return inForce;
    });
    reads = next.catch(() => {});
    return next;
  }

  const quietly = () => {
    refresh().catch((err) =>
      log.warn(
        { err: (err as Error).message, policyVersion: inForce?.version },
        'rules policy not read; keeping the version in force',
      ),
    );
  };
  // Its first notification-less call reads the version in force (the start's read).
  const listener = listenForPolicy(pool, quietly, (err) =>
    log.warn(
      { err: (err as Error).message },
      'rules policy listener lost; looking every few seconds meanwhile',
    ),
  );
  const timer = setInterval(quietly, refreshMs);
  timer.unref();

  return {
    current: async (brand?: string) => brands.of(inForce ?? (await refresh()), brand),
    refresh,
    listening: () => listener.listening(),
    async close() {
      clearInterval(timer);
      await listener.close();
      await reads;
    },
  };
}
