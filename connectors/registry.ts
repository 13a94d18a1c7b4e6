import type { CollectingConnector, ConnectorRegistry } from './types';

/**
 * The collecting connectors a process was configured with, by name. A name given twice is a
 * configuration mistake, said at start rather than routed at random.
 */
export function connectorRegistry(connectors: readonly CollectingConnector[]): ConnectorRegistry {
  const byName = new Map<string, CollectingConnector>();
  for (const connector of connectors) {
    if (!connector.capabilities.includes('collect')) continue;
    if (byName.has(connector.name)) throw new Error(`two connectors are named ${connector.name}`);
    byName.set(connector.name, connector);
  }
  return { names: [...byName.keys()], collector: (name) => byName.get(name) };
}
