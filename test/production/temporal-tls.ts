import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Connection, type TLSConfig } from '@temporalio/client';
import { clientTlsOf, type TemporalClientTls, temporalTlsFiles } from '../../scripts/temporal-certs';

// Clients of a Temporal that requires mutual TLS: with the client certificate its CA signed, and
// without one, to see it refused.

/** The client certificate `npm start -- --temporal postgres` made in its data folder (DATA_DIR). */
export function dataDirClientTls(env: NodeJS.ProcessEnv): TemporalClientTls {
  if (!env.DATA_DIR) throw new Error('the stack has no DATA_DIR');
  return clientTlsOf(temporalTlsFiles(path.join(env.DATA_DIR, 'temporal-tls')));
}

/** The SDK's TLS options for `tls`: the private CA, the client's pair, the name the server's certificate is for. */
export const sdkTls = (tls: TemporalClientTls): TLSConfig => ({
  serverRootCACertificate: readFileSync(tls.ca),
  clientCertPair: { crt: readFileSync(tls.cert), key: readFileSync(tls.key) },
  serverNameOverride: tls.serverName,
});

/**
 * What a client with `tls` (undefined: plain TCP) gets from the server at `address`: "served"
 * when it answers GetSystemInfo, else the error.
 */
export async function temporalAnswers(address: string, tls: TLSConfig | undefined): Promise<string> {
  let connection: Connection | undefined;
  try {
    connection = await Connection.connect({ address, tls, connectTimeout: '5s' });
    await connection.workflowService.getSystemInfo({});
    return 'served';
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  } finally {
    await connection?.close().catch(() => {});
  }
}
