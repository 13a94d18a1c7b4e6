import type { Client } from '@temporalio/client';
import { type ApiPixConnector, createApiPixConnector, toApiPixTxid } from '../../connectors/api-pix';
import { type DepositInput, depositStateQuery, depositWorkflowId } from '../../contracts/deposit';
import type { HeldDepositInput } from '../../workflows/deposit';
import type { ApiPixForTest } from './api-pix';
import { waitUntil } from './wait';

// Held deposits on an API Pix PSP (the emulation) for the tests of their return, made as the
// deposit's run leaves one: the charge made and paid by someone else at the PSP, then the held
// run started with the payment proven and the connector named.

/** The API Pix connector speaking to the emulation, as pixflow's worker is configured with it. */
export function apiPixConnectorOf(psp: ApiPixForTest, name?: string): ApiPixConnector {
  return createApiPixConnector({
    ...(name ? { name } : {}),
    baseUrl: psp.url,
    tokenUrl: psp.tokenUrl,
    clientId: psp.clientId,
    clientSecret: psp.clientSecret,
    cert: psp.tls.cert,
    key: psp.tls.key,
    ca: psp.tls.ca,
    pixKey: psp.pixKey,
    timeoutMs: 5_000,
  });
}

/**
 * A charge on the PSP paid by `payerCpf`, held on `taskQueue`: answers the held run's handle and
 * the received Pix's e2e id once the deposit is `held`.
 */
export async function heldOnApiPix(o: {
  client: Client;
  psp: ApiPixForTest;
  apiPix: ApiPixConnector;
  taskQueue: string;
  input: DepositInput;
  payerCpf: string;
}) {
  const { input } = o;
  await o.apiPix.createCharge({
    txid: input.txid,
    amountCentavos: input.amountCentavos,
    payer: input.client,
  });
  const pix = await o.psp.pay(toApiPixTxid(input.txid), {
    payer: 'third_party',
    cpf: o.payerCpf,
    nome: 'João',
  });
  const at = new Date().toISOString();
  const held: HeldDepositInput = {
    deposit: input,
    state: {
      status: 'awaiting_payment',
      txid: input.txid,
      amountCentavos: input.amountCentavos,
      notifications: 1,
      inquiries: 1,
      startedAt: at,
      updatedAt: at,
      payment: {
        e2eId: pix.endToEndId,
        payerCpfMasked: `***.${o.payerCpf.slice(3, 6)}.${o.payerCpf.slice(6, 9)}-**`,
        payerIsClient: false,
      },
      policyVersion: 1,
      connector: o.apiPix.name,
    },
    hold: 'third_party_payer',
    rowsWritten: 1,
  };
  const handle = await o.client.workflow.start('heldDepositWorkflow', {
    workflowId: depositWorkflowId(input.txid),
    taskQueue: o.taskQueue,
    args: [held],
  });
  await waitUntil(
    () => handle.query(depositStateQuery),
    (s) => s.status === 'held',
  );
  return { handle, e2eId: pix.endToEndId as string };
}
