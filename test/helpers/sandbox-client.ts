import { createProviderClient, type ProviderClientOptions } from '../../provider/client';

/** The real provider client pointed at a sandbox, with the sandbox's default credentials. */
export function clientFor(url: string, overrides: Partial<ProviderClientOptions> = {}) {
  return createProviderClient({
    baseUrl: url,
    authUrl: url,
    clientId: 'sandbox-client',
    clientSecret: 'sandbox-secret',
    apiKey: 'sandbox-api-key',
    merchant: 'sandbox-merchant',
    timeoutMs: 5000,
    ...overrides,
  });
}
