import { Router } from 'express';
import type { Capability } from '../connectors/types';
import { connectorBreakers } from '../db/connector-breakers';
import type { BackofficeDeps } from './deps';
import { page } from './render';

// "Conectores": the connectors the deposits' routing names, in the order a deposit's charge is
// asked of them (docs/rules.md, Routing deposits), each with what it can do and its breaker as
// every worker shares it in Postgres. Every operator sees it; the routing is changed on the
// policy page (deposits.routing), by an admin.

/**
 * What each connector pixflow ships can do, by the name it routes under (each connector declares
 * its own; test/backoffice/connectors.test.ts holds this list to them). A name the routing gives
 * that is none of these is shown unknown: the workers skip it.
 */
export const SHIPPED_CONNECTORS: Readonly<Record<string, readonly Capability[]>> = {
  'identity-payments': ['kyc', 'liveness', 'collect', 'payout', 'receipts'],
  'api-pix': ['collect', 'return'],
};

export function connectorRoutes({ pool, policy }: Pick<BackofficeDeps, 'pool' | 'policy'>) {
  const r = Router();
  r.get('/connectors', async (req, res) => {
    const inForce = await policy.current();
    const { routing } = inForce.policy.deposits;
    const breakers = await connectorBreakers(pool, routing.connectors, new Date(), routing.breaker.windowMs);
    page(req, res, 'connectors', {
      policyVersion: inForce.version,
      breaker: routing.breaker,
      connectors: breakers.map((b, i) => ({
        ...b,
        position: i + 1,
        capabilities: SHIPPED_CONNECTORS[b.connector],
      })),
    });
  });
  return r;
}
