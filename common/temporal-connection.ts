import { readFileSync } from 'node:fs';
import type { Config } from './config';

// Same settings for the API's client and the worker: local dev server by default, any cluster
// or Temporal Cloud with TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TLS / API-key settings. Mutual
// TLS: the client certificate pair, the private CA that signed the server's, and the name it
// was made for when the address says another (docs/security.md).
export function temporalConnectionOptions(config: Config) {
  const cert = config.TEMPORAL_TLS_CERT_PATH;
  const key = config.TEMPORAL_TLS_KEY_PATH;
  const ca = config.TEMPORAL_TLS_CA_PATH;
  const serverName = config.TEMPORAL_TLS_SERVER_NAME;
  const useTls = config.TEMPORAL_TLS || !!(config.TEMPORAL_API_KEY || cert || key || ca || serverName);
  const tls = useTls
    ? {
        ...(cert && key ? { clientCertPair: { crt: readFileSync(cert), key: readFileSync(key) } } : {}),
        ...(ca ? { serverRootCACertificate: readFileSync(ca) } : {}),
        ...(serverName ? { serverNameOverride: serverName } : {}),
      }
    : undefined;
  return {
    address: config.TEMPORAL_ADDRESS,
    tls,
    apiKey: config.TEMPORAL_API_KEY,
  };
}
