import { loadConfig } from '../../common/config';
import {
  createIdentityPaymentsConnector,
  type IdentityPaymentsOptions,
} from '../../connectors/identity-payments';
import { createProviderClient, type ProviderClientOptions } from '../../connectors/identity-payments/client';

/** The real provider client pointed at a sandbox, with the sandbox's default credentials. */
export function clientFor(url: string, overrides: Partial<ProviderClientOptions> = {}) {
  return createProviderClient({ ...sandboxProvider(url), ...overrides });
}

/** The sandbox's default credentials, at `url`. */
const sandboxProvider = (url: string) => ({
  baseUrl: url,
  authUrl: url,
  clientId: 'sandbox-client',
  clientSecret: 'sandbox-secret',
  apiKey: 'sandbox-api-key',
  merchant: 'sandbox-merchant',
  timeoutMs: 5000,
});

/** The provider's connector (what the worker's activities use) pointed at a sandbox. */
export function connectorFor(url: string, overrides: Partial<IdentityPaymentsOptions> = {}) {
  return createIdentityPaymentsConnector({ ...sandboxProvider(url), ...overrides });
}

/** POSTs to one of the sandbox's /sandbox/* controls; a refusal is an error with its answer. */
export async function sandboxControl(sandboxUrl: string, path: string, body?: unknown): Promise<unknown> {
  const res = await fetch(`${sandboxUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body ?? {}),
  });
  if (!res.ok) throw new Error(`sandbox ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/**
 * The sandbox dialect the run asks for (SANDBOX_DIALECT, as the sandbox itself reads it): the
 * flow tests run once in the document's dialect and once in the other (vitest.config.mts).
 */
export function sandboxDialectFromEnv() {
  return loadConfig({ SANDBOX_DIALECT: process.env.SANDBOX_DIALECT }).SANDBOX_DIALECT;
}
