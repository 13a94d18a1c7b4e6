import { Context } from '@temporalio/activity';
import { isProviderError, UnclassifiedAnswerError } from '../connectors/errors';
import type {
  ChargeRequest,
  CollectingConnector,
  ConnectorRegistry,
  DepositCharge,
} from '../connectors/types';
import { FIRST_CONNECTOR } from '../contracts/deposit';
import { DEFAULT_BRAND } from '../contracts/flow';
import {
  type BreakerSettings,
  type ConnectorBreaker,
  claimHalfOpenTry,
  connectorBreakers,
  recordChargeOutcome,
} from '../db/connector-breakers';
import { brandWithoutAccount, breakerKey } from './brand-connectors';
import type { ActivityDeps } from './deps';

// Routing a deposit's charge (docs/rules.md, Routing deposits): the policy's connectors in order,
// skipping those whose breaker is open (db/connector-breakers.ts, shared by every worker), those
// this process does not have and those that do not collect. A connector that says it is unhealthy
// is counted against its breaker and the next one is asked, within the same attempt, so the
// caller waiting for the QR gets it from the next connector at once; a business refusal stops.

/** A charge, and the connector that made it: the deposit's inquiries and returns go to it only. */
export interface RoutedCharge {
  charge: DepositCharge;
  connector: string;
}

/** How long a half-open breaker's one try holds it: the charge activity's own time limit. */
const HALF_OPEN_TRY_MS = 30_000;

/**
 * Whether a charge's failure says the connector is down rather than the deposit wrong: what a
 * retryable provider error is (5xx, timeout, no connection, 429, a token refused). An answer no
 * rule reads is not: the connector answered, and asking another would not tell us what it meant.
 */
export const saysUnhealthy = (err: unknown): boolean =>
  isProviderError(err) && err.retryable && !(err instanceof UnclassifiedAnswerError);

/**
 * The connector a deposit's inquiries go to: the one of its brand's that made its charge; unset
 * (a deposit from before routing) the first provider, which made every charge then. `brand`: the
 * deposit's, whose registry `registry` is; another brand's account is never asked.
 */
export function connectorOfDeposit(
  registry: ConnectorRegistry,
  name: string | undefined,
  brand: string = DEFAULT_BRAND,
): CollectingConnector {
  const wanted = name ?? FIRST_CONNECTOR;
  const connector = registry.collector(wanted);
  if (connector) return connector;
  // Another brand's deposit on an account its brand no longer has: no retry will find one.
  if (brand !== DEFAULT_BRAND) throw brandWithoutAccount(brand, wanted);
  // A deposit made by a connector this process lost from its configuration cannot be looked up
  // anywhere else: failing (retried, logged) keeps it waiting instead of asking the wrong PSP.
  throw new Error(`the deposit's connector ${wanted} is not configured in this worker: configure it again`);
}

/** What asking a connector for a deposit's charge needs. */
interface Asking {
  /** The deposit's brand: its breakers are its own (brand-connectors.ts breakerKey). */
  brand: string;
  pool: ActivityDeps['pool'];
  clock: ActivityDeps['clock'];
  request: ChargeRequest;
  breaker: BreakerSettings;
}

/**
 * Whether to ask this connector now: closed, or half-open and this deposit took its one try
 * (taken only when the deposit comes to it, so a deposit served before it holds no try).
 */
const mayAsk = async (pool: Asking['pool'], b: ConnectorBreaker | undefined, now: Date): Promise<boolean> =>
  !b ||
  b.state === 'closed' ||
  (b.state === 'half_open' && (await claimHalfOpenTry(pool, b.connector, now, HALF_OPEN_TRY_MS)));

/**
 * Asks one connector for the charge: the charge, or `down` when it says it is down (counted
 * against its breaker and logged); any other failure is thrown.
 */
async function ask(
  { brand, pool, clock, request, breaker }: Asking,
  name: string,
  connector: CollectingConnector,
  was: ConnectorBreaker | undefined,
): Promise<RoutedCharge | { down: unknown }> {
  try {
    const charge = await connector.createCharge(request);
    // A connector with nothing against it is not written to: one write less per deposit.
    if (was && (was.state !== 'closed' || was.failures > 0))
      await recordChargeOutcome(pool, breakerKey(name, brand), true, breaker, clock());
    return { charge, connector: name };
  } catch (err) {
    if (!saysUnhealthy(err)) throw err;
    const after = await recordChargeOutcome(pool, breakerKey(name, brand), false, breaker, clock());
    Context.current().log.warn('deposit charge failed at a connector; asking the next one', {
      connector: name,
      brand,
      error: err instanceof Error ? err.message : String(err),
      breaker: after.state,
    });
    return { down: err };
  }
}

export function createDepositRouter(deps: Pick<ActivityDeps, 'pool' | 'policy' | 'clock'>) {
  const { pool, policy, clock } = deps;
  /** Routing names a brand has no connector for: said once each, then skipped quietly. */
  const unknownSaid = new Set<string>();

  /** The routing's connectors the brand has, in order; an unknown name skipped, said once. */
  function known(
    registry: ConnectorRegistry,
    brand: string,
    names: readonly string[],
  ): Array<[string, CollectingConnector]> {
    return names.flatMap((name): Array<[string, CollectingConnector]> => {
      const connector = registry.collector(name);
      if (connector) return [[name, connector]];
      const said = `${brand}\u0000${name}`;
      if (!unknownSaid.has(said)) {
        unknownSaid.add(said);
        Context.current().log.warn(
          brand === DEFAULT_BRAND
            ? "the deposits' routing names a connector this worker does not have (or that does not collect): skipped"
            : "the deposits' routing names a connector the brand has no account at: skipped",
          { connector: name, brand, configured: registry.names },
        );
      }
      return [];
    });
  }

  return {
    /**
     * The charge from the first connector of the routing, among the brand's (`registry`), that
     * makes it. Every connector open: the first is asked anyway, since a deposit no one is asked
     * for is refused for sure, while the first may have come back before its cool-down ended (the
     * breaker is there to spare the others' deposits a down connector's wait, not to refuse
     * them). The last unhealthy failure is thrown when none made it (retried on the activity's
     * schedule). A brand other than the default with none of the routing's connectors fails for
     * good (brand_without_account).
     */
    async routeCharge(
      request: ChargeRequest,
      registry: ConnectorRegistry,
      brand: string = DEFAULT_BRAND,
    ): Promise<RoutedCharge> {
      // The brand's routing: the operator's, unless the brand set its own (docs/policy.md).
      const { policy: rules } = await policy.current(brand);
      const { connectors: names, breaker } = rules.deposits.routing;
      const routed = known(registry, brand, names);
      if (routed.length === 0) {
        if (brand !== DEFAULT_BRAND) throw brandWithoutAccount(brand, `${names.join(' or ')}`);
        throw new Error(
          `no connector of the deposits' routing (${names.join(', ')}) is configured in this worker (${registry.names.join(', ')})`,
        );
      }
      const now = clock();
      const breakers = await connectorBreakers(
        pool,
        routed.map(([n]) => breakerKey(n, brand)),
        now,
        breaker.windowMs,
      );
      const byKey = new Map(breakers.map((b) => [b.connector, b]));
      const breakerOf = (name: string) => byKey.get(breakerKey(name, brand));
      const at: Asking = { brand, pool, clock, request, breaker };
      let last: unknown;
      let asked = false;
      for (const [name, connector] of routed) {
        if (!(await mayAsk(pool, breakerOf(name), now))) continue;
        asked = true;
        const answer = await ask(at, name, connector, breakerOf(name));
        if ('charge' in answer) return answer;
        last = answer.down;
      }
      if (!asked) {
        const [name, connector] = routed[0] as [string, CollectingConnector];
        const answer = await ask(at, name, connector, breakerOf(name));
        if ('charge' in answer) return answer;
        last = answer.down;
      }
      throw last;
    },
  };
}
