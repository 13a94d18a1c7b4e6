import { Context } from '@temporalio/activity';
import { isProviderError, UnclassifiedAnswerError } from '../connectors/errors';
import { connectorRegistry } from '../connectors/registry';
import type {
  ChargeRequest,
  CollectingConnector,
  ConnectorRegistry,
  DepositCharge,
} from '../connectors/types';
import { FIRST_CONNECTOR } from '../contracts/deposit';
import {
  type BreakerSettings,
  type ConnectorBreaker,
  claimHalfOpenTry,
  connectorBreakers,
  recordChargeOutcome,
} from '../db/connector-breakers';
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

/** The collecting connectors of a process: the registry it was given, or its first provider alone. */
export const collectorsOf = ({ provider, collectors }: Pick<ActivityDeps, 'provider' | 'collectors'>) =>
  collectors ?? connectorRegistry([provider]);

/**
 * The connector a deposit's inquiries go to: the one that made its charge; unset (a deposit from
 * before routing) the first provider, which made every charge then.
 */
export function connectorOfDeposit(
  deps: Pick<ActivityDeps, 'provider' | 'collectors'>,
  name: string | undefined,
): CollectingConnector {
  const wanted = name ?? FIRST_CONNECTOR;
  const connector = collectorsOf(deps).collector(wanted);
  // A deposit made by a connector this process lost from its configuration cannot be looked up
  // anywhere else: failing (retried, logged) keeps it waiting instead of asking the wrong PSP.
  if (!connector)
    throw new Error(`the deposit's connector ${wanted} is not configured in this worker: configure it again`);
  return connector;
}

/** What asking a connector for a deposit's charge needs. */
interface Asking {
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
  { pool, clock, request, breaker }: Asking,
  name: string,
  connector: CollectingConnector,
  was: ConnectorBreaker | undefined,
): Promise<RoutedCharge | { down: unknown }> {
  try {
    const charge = await connector.createCharge(request);
    // A connector with nothing against it is not written to: one write less per deposit.
    if (was && (was.state !== 'closed' || was.failures > 0))
      await recordChargeOutcome(pool, name, true, breaker, clock());
    return { charge, connector: name };
  } catch (err) {
    if (!saysUnhealthy(err)) throw err;
    const after = await recordChargeOutcome(pool, name, false, breaker, clock());
    Context.current().log.warn('deposit charge failed at a connector; asking the next one', {
      connector: name,
      error: err instanceof Error ? err.message : String(err),
      breaker: after.state,
    });
    return { down: err };
  }
}

export function createDepositRouter(
  deps: Pick<ActivityDeps, 'provider' | 'collectors' | 'pool' | 'policy' | 'clock'>,
) {
  const registry: ConnectorRegistry = collectorsOf(deps);
  const { pool, policy, clock } = deps;
  /** Routing names this process has no connector for: said once each, then skipped quietly. */
  const unknownSaid = new Set<string>();

  /** The routing's connectors this process has, in order; an unknown name skipped, said once. */
  function known(names: readonly string[]): Array<[string, CollectingConnector]> {
    return names.flatMap((name): Array<[string, CollectingConnector]> => {
      const connector = registry.collector(name);
      if (connector) return [[name, connector]];
      if (!unknownSaid.has(name)) {
        unknownSaid.add(name);
        Context.current().log.warn(
          "the deposits' routing names a connector this worker does not have (or that does not collect): skipped",
          { connector: name, configured: registry.names },
        );
      }
      return [];
    });
  }

  return {
    /**
     * The charge from the first connector of the routing that makes it. Every connector open:
     * the first is asked anyway, since a deposit no one is asked for is refused for sure, while
     * the first may have come back before its cool-down ended (the breaker is there to spare the
     * others' deposits a down connector's wait, not to refuse them). The last unhealthy failure
     * is thrown when none made it (retried on the activity's schedule).
     */
    async routeCharge(request: ChargeRequest): Promise<RoutedCharge> {
      const { policy: rules } = await policy.current();
      const { connectors: names, breaker } = rules.deposits.routing;
      const routed = known(names);
      if (routed.length === 0)
        throw new Error(
          `no connector of the deposits' routing (${names.join(', ')}) is configured in this worker (${registry.names.join(', ')})`,
        );
      const now = clock();
      const breakers = await connectorBreakers(
        pool,
        routed.map(([n]) => n),
        now,
        breaker.windowMs,
      );
      const byName = new Map(breakers.map((b) => [b.connector, b]));
      const at: Asking = { pool, clock, request, breaker };
      let last: unknown;
      let asked = false;
      for (const [name, connector] of routed) {
        if (!(await mayAsk(pool, byName.get(name), now))) continue;
        asked = true;
        const answer = await ask(at, name, connector, byName.get(name));
        if ('charge' in answer) return answer;
        last = answer.down;
      }
      if (!asked) {
        const [name, connector] = routed[0] as [string, CollectingConnector];
        const answer = await ask(at, name, connector, byName.get(name));
        if ('charge' in answer) return answer;
        last = answer.down;
      }
      throw last;
    },
  };
}
