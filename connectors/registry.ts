import { readFileSync } from 'node:fs';
import type { BrandConnectorSettings } from './accounts';
import { type ApiPixConnector, type ApiPixOptions, createApiPixConnector } from './api-pix';
import {
  createIdentityPaymentsConnector,
  type IdentityPaymentsConnector,
  type IdentityPaymentsOptions,
} from './identity-payments';
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

/** How a brand's connectors are built beyond its accounts: the process's tuning, logs and metrics. */
export interface BrandConnectorOptions {
  provider: Pick<
    IdentityPaymentsOptions,
    'timeoutMs' | 'authHeader' | 'receiptFormat' | 'livenessIdField' | 'logger' | 'onCall'
  >;
  apiPix?: Pick<ApiPixOptions, 'timeoutMs' | 'logger' | 'onCall'>;
  /**
   * The connectors the process built from the environment's accounts: an account resolved `from:
   * 'environment'` (the default brand's, without a record) takes these rather than a second one,
   * so the default brand keeps the process's token cache and metrics.
   */
  environment?: { provider?: IdentityPaymentsConnector; apiPix?: ApiPixConnector };
}

/** A brand's connectors, each speaking for the brand's account there; undefined where it has none. */
export interface BrandConnectors {
  brandId: string;
  provider: IdentityPaymentsConnector | undefined;
  apiPix: ApiPixConnector | undefined;
  /** The collecting ones among them, by name, for the deposit's routing. */
  collectors: ConnectorRegistry;
  close(): void;
}

/**
 * The connectors of one brand, from its resolved accounts (accounts.ts connectorSettingsFor): an
 * API Pix account's PEM files are read now, and one that cannot be read is named with its brand.
 */
export function brandConnectors(
  settings: BrandConnectorSettings,
  options: BrandConnectorOptions,
): BrandConnectors {
  const fromEnvironment = (c: 'identity-payments' | 'api-pix') => settings[c]?.from === 'environment';
  const ip = settings['identity-payments']?.account;
  const provider = ip
    ? fromEnvironment('identity-payments') && options.environment?.provider
      ? options.environment.provider
      : createIdentityPaymentsConnector({
          ...options.provider,
          baseUrl: ip.baseUrl,
          authUrl: ip.authUrl,
          clientId: ip.clientId,
          clientSecret: ip.clientSecret,
          apiKey: ip.apiKey,
          merchant: ip.merchant,
        })
    : undefined;
  const pix = settings['api-pix']?.account;
  const pem = (setting: string, file: string) => {
    try {
      return readFileSync(file, 'utf8');
    } catch (err) {
      throw new Error(
        `brand ${settings.brandId}'s api-pix account: ${setting} ${JSON.stringify(file)} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`,
      );
    }
  };
  const reusedPix = pix && fromEnvironment('api-pix') ? options.environment?.apiPix : undefined;
  const apiPix = reusedPix
    ? reusedPix
    : pix
      ? createApiPixConnector({
          ...options.apiPix,
          baseUrl: pix.baseUrl,
          ...(pix.tokenUrl ? { tokenUrl: pix.tokenUrl } : {}),
          clientId: pix.clientId,
          clientSecret: pix.clientSecret,
          cert: pem('certFile', pix.certFile),
          key: pem('keyFile', pix.keyFile),
          ...(pix.caFile ? { ca: pem('caFile', pix.caFile) } : {}),
          pixKey: pix.pixKey,
          ...(pix.expirySeconds ? { expirySeconds: pix.expirySeconds } : {}),
        })
      : undefined;
  return {
    brandId: settings.brandId,
    provider,
    apiPix,
    collectors: connectorRegistry([provider, apiPix].filter((c) => c !== undefined)),
    // The environment's connectors are the process's to close, not the brand's.
    close: () => (apiPix === reusedPix ? undefined : apiPix?.close()),
  };
}
