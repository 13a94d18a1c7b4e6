import { ApplicationFailure, Context } from '@temporalio/activity';
import { NoSuchBrand } from '../connectors/accounts';
import { connectorRegistry } from '../connectors/registry';
import type { Connector } from '../connectors/types';
import { brandScopedId, DEFAULT_BRAND } from '../contracts/flow';
import type { ActivityDeps, FlowConnectors } from './deps';

// Which connectors a flow's activities call (docs/brands.md, Flows on their brand's accounts):
// the flow's brand's, never another brand's. The brand comes from what the activity is given
// (the flow's input or record) or, for an activity given neither, from the id of the flow it runs
// for, which names its brand (contracts/flow.ts brandScopedId). A brand without an account its
// flow needs fails the activity for good: retrying cannot make one, and the default brand's
// account must never stand in for it.

/** The failure type of an activity whose brand has no account at the connector it needs. */
export const BRAND_WITHOUT_ACCOUNT = 'brand_without_account';

/**
 * The brand a workflow id names: the part before its first `:`, or the default brand when it has
 * none (contracts/flow.ts brandScopedId: no brand id, txid or transactionId holds a `:`).
 */
export function brandOfWorkflowId(workflowId: string): string {
  const at = workflowId.indexOf(':');
  return at > 0 ? workflowId.slice(0, at) : DEFAULT_BRAND;
}

/** The brand of the flow the calling activity runs for; the default outside an activity. */
export function brandOfCallingFlow(): string {
  try {
    return brandOfWorkflowId(Context.current().info.workflowExecution?.workflowId ?? '');
  } catch {
    return DEFAULT_BRAND;
  }
}

/** The activity's failure for a brand without the account `what` needs; never retried. */
export function brandWithoutAccount(brand: string, what: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: BRAND_WITHOUT_ACCOUNT,
    message: `brand ${brand} has no ${what} account: give it one (npm run operator -- brand account set)`,
    nonRetryable: true,
    details: [brand],
  });
}

/**
 * A breaker's key for a brand's connector: the default brand's is the connector's name, as before
 * brands; another brand's is scoped by it, so one brand's account that is down never opens the
 * breaker of another's.
 */
export const breakerKey = (connector: string, brand: string) => brandScopedId(connector, brand);

/** Each brand's connectors, as the activities reach them. */
export interface BrandConnectorsReader {
  /** The brand's connectors; without `connectorsFor`, every brand's are the process's. */
  of(brand: string): Promise<FlowConnectors>;
  /** The brand's first provider, or the activity's failure when it has no account there. */
  provider(brand: string): Promise<Connector>;
}

export function brandConnectorsReader(
  deps: Pick<ActivityDeps, 'provider' | 'collectors' | 'connectorsFor'>,
): BrandConnectorsReader {
  // The process's own: the registry it was given, or its first provider alone.
  const own: FlowConnectors = {
    provider: deps.provider,
    collectors: deps.collectors ?? connectorRegistry([deps.provider]),
  };
  const of = async (brand: string): Promise<FlowConnectors> => {
    if (!deps.connectorsFor) return own;
    try {
      return await deps.connectorsFor(brand);
    } catch (err) {
      if (err instanceof NoSuchBrand)
        throw ApplicationFailure.create({
          type: BRAND_WITHOUT_ACCOUNT,
          message: `no brand ${brand}`,
          nonRetryable: true,
          details: [brand],
        });
      throw err;
    }
  };
  return {
    of,
    async provider(brand) {
      const { provider } = await of(brand);
      if (!provider) throw brandWithoutAccount(brand, 'identity-payments');
      return provider;
    },
  };
}
