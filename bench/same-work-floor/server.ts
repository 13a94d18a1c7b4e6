import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, Connection, WithStartWorkflowOperation, WorkflowNotFoundError } from '@temporalio/client';
import { z } from 'zod';
import { pixflowDataConverter } from '../../common/codec';
import { loadConfig } from '../../common/config';
import { temporalConnectionOptions } from '../../common/temporal-connection';
import { readPaymentNotification } from '../../connectors/identity-payments';
import { validationProblem } from '../../http/problem';
import { SAME_WORK_QUEUE } from '../settings';
import {
  notifiedSignal,
  payoutUpdate,
  qrUpdate,
  type sameWorkDeposit,
  sameWorkDepositId,
  type sameWorkWithdrawal,
  sameWorkWithdrawalId,
} from './workflows';

// The same-work floor's HTTP server, a process of its own as pixflow's API is (forked by the
// bench with the stack's environment): node:http, no framework, one Temporal client.
//   POST /deposits     update-with-start of a deposit, answered with its QR (201)
//   POST /withdrawals  update-with-start of a payout, answered once the provider has it (202)
//   POST /notifications/<WEBHOOK_SECRET>  the provider's notifications: a signal to the flow
// It listens on a free port and tells the bench its URL.

const clientSchema = z.object({
  externalId: z.string().min(1),
  cpf: z.string().regex(/^\d{11}$/),
  email: z.string().min(1),
  name: z.string().min(1),
});
const depositSchema = z.object({
  txid: z.string().regex(/^\d{1,35}$/),
  amountCentavos: z.number().int().positive(),
  client: clientSchema,
});
const withdrawalSchema = z.object({
  transactionId: z.string().min(1).max(64),
  amountCentavos: z.number().int().positive(),
  pixKey: z.string().min(1),
  pixType: z.literal('CPF'),
  client: clientSchema,
});

type Answer = { status: number; body?: unknown };

function readBody(req: http.IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8') || 'null'));
      } catch {
        resolve(undefined);
      }
    });
    req.on('error', reject);
  });
}

function badRequest(error: z.ZodError): Answer {
  const p = validationProblem('body', error);
  return { status: 400, body: { type: 'about:blank', title: p.title, status: 400, detail: p.detail } };
}

async function main() {
  const config = loadConfig(process.env);
  const connection = await Connection.connect({
    ...temporalConnectionOptions(config),
    address: process.env.BENCH_TEMPORAL_ADDRESS,
  });
  const client = new Client({
    connection,
    namespace: config.TEMPORAL_NAMESPACE,
    dataConverter: pixflowDataConverter(config.codecKeys),
  });
  const start = <T>(type: string, workflowId: string, args: [T]) =>
    new WithStartWorkflowOperation(type, {
      workflowId,
      taskQueue: SAME_WORK_QUEUE,
      args,
      workflowIdConflictPolicy: 'USE_EXISTING',
    });

  const routes: Record<string, (body: unknown) => Promise<Answer>> = {
    async '/deposits'(body) {
      const input = depositSchema.safeParse(body);
      if (!input.success) return badRequest(input.error);
      const qr = await client.workflow.executeUpdateWithStart(qrUpdate, {
        startWorkflowOperation: start<Parameters<typeof sameWorkDeposit>[0]>(
          'sameWorkDeposit',
          sameWorkDepositId(input.data.txid),
          [input.data],
        ),
      });
      return { status: 201, body: { txid: input.data.txid, ...qr } };
    },
    async '/withdrawals'(body) {
      const input = withdrawalSchema.safeParse(body);
      if (!input.success) return badRequest(input.error);
      const status = await client.workflow.executeUpdateWithStart(payoutUpdate, {
        startWorkflowOperation: start<Parameters<typeof sameWorkWithdrawal>[0]>(
          'sameWorkWithdrawal',
          sameWorkWithdrawalId(input.data.transactionId),
          [input.data],
        ),
      });
      return { status: 202, body: { transactionId: input.data.transactionId, status } };
    },
    async [`/notifications/${config.WEBHOOK_SECRET}`](body) {
      const note = readPaymentNotification(body);
      if (!note.success) return badRequest(note.error);
      if (note.data.partnerId !== config.WEBHOOK_PARTNER_ID) return { status: 401 };
      // The charge's `requested` says nothing the flow does not know: only an outcome is looked at.
      if (note.data.action !== 'updated') return { status: 200 };
      const id =
        note.data.kind === 'deposit' ? sameWorkDepositId(note.data.id) : sameWorkWithdrawalId(note.data.id);
      try {
        await client.workflow.getHandle(id).signal(notifiedSignal);
      } catch (err) {
        // Not ours, or done already (a repeated notification): nothing to look at.
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
      return { status: 200 };
    },
  };

  const server = http.createServer((req, res) => {
    const route = req.method === 'POST' ? routes[req.url ?? ''] : undefined;
    const answer = (a: Answer) => {
      const json = a.body === undefined ? '' : JSON.stringify(a.body);
      const type = a.status >= 400 ? 'application/problem+json' : 'application/json';
      res.writeHead(a.status, json ? { 'content-type': type } : {}).end(json);
    };
    if (!route) return answer({ status: 404 });
    readBody(req)
      .then(route)
      .then(answer, (err: unknown) => {
        process.stderr.write(`same-work floor server: ${err instanceof Error ? err.message : String(err)}\n`);
        answer({ status: 500 });
      });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const stop = () => {
    server.close(() => void connection.close().then(() => process.exit(0)));
    server.closeAllConnections();
  };
  process.on('message', (m) => m === 'stop' && stop());
  process.on('disconnect', stop);
  process.send?.({ ready: true, url: `http://127.0.0.1:${port}` });
}

main().catch((err) => {
  process.stderr.write(
    `same-work floor server: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
