import { readFileSync } from 'node:fs';
import type { Config } from './config';

// Same settings for the API's client and the worker: local dev server by default, any cluster
// or Temporal Cloud with TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TLS / API-key settings.
export function temporalConnectionOptions(config: Config) {
  const tls =
    config.TEMPORAL_TLS || config.TEMPORAL_API_KEY
      ? config.TEMPORAL_TLS_CERT_PATH && config.TEMPORAL_TLS_KEY_PATH
        ? {
            clientCertPair: {
              crt: readFileSync(config.TEMPORAL_TLS_CERT_PATH),
              key: readFileSync(config.TEMPORAL_TLS_KEY_PATH),
            },
          }
        : true
      : undefined;
  return {
    address: config.TEMPORAL_ADDRESS,
    tls,
    apiKey: config.TEMPORAL_API_KEY,
  };
}
