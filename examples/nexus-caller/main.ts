import { randomBytes } from 'node:crypto';
import { Client, Connection, isGrpcServiceError } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { NativeConnection, Worker } from '@temporalio/worker';
import { z } from 'zod';
import { type Progress, progressQuery, type signUpDepositAndPayOut } from './workflows';

// A backend on Temporal calling pixflow through Nexus, run whole: `npm run example:nexus`, with
// `npm start` running. It makes its own namespace on pixflow's Temporal, runs its own worker
// (its workflow: ./workflows.ts) with Temporal's default data converter, no pixflow codec key,
// starts the workflow with the backend's pixflow API key (PIXFLOW_API_KEY), and plays the person
// in the provider sandbox: their phone (the liveness check) and their bank (paying the deposit,
// receiving the payout). It ends when the workflow does.

const env = z
  .object({
    TEMPORAL_ADDRESS: z.string().min(1).default('127.0.0.1:7233'),
    /** The caller's own namespace, made when it does not exist. */
    CALLER_NAMESPACE: z.string().min(1).default('nexus-caller'),
    CALLER_TASK_QUEUE: z.string().min(1).default('nexus-caller'),
    SANDBOX_URL: z.url().default('http://127.0.0.1:4010'),
    /** The backend's pixflow API key: `npm start`'s own by default. */
    PIXFLOW_API_KEY: z.string().min(1).default('dev-api-key'),
    /** A sandbox test document whose KYC is regular and whose liveness passes. */
    PERSON_CPF: z
      .string()
      .regex(/^\d{11}$/)
      .default('73628883504'),
  })
  .parse(process.env);

/** gRPC's NOT_FOUND status code. */
const NOT_FOUND = 5;

const log = (line: string) => process.stdout.write(`[nexus-caller] ${line}\n`);

/** Makes the caller's namespace, as its operator would once (`temporal operator namespace create`). */
async function ensureNamespace(connection: Connection) {
  try {
    await connection.workflowService.describeNamespace({ namespace: env.CALLER_NAMESPACE });
  } catch (err) {
    if (!isGrpcServiceError(err) || err.code !== NOT_FOUND) throw err;
    await connection.workflowService.registerNamespace({
      namespace: env.CALLER_NAMESPACE,
      workflowExecutionRetentionPeriod: msToTs('1 day'),
    });
    log(`made namespace ${env.CALLER_NAMESPACE}`);
  }
}

/** One of the sandbox's controls; its status (404 until there is something to act on). */
async function sandbox(path: string, body: unknown = {}) {
  const res = await fetch(`${env.SANDBOX_URL}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  await res.body?.cancel();
  return res.status;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Plays the person: does what the workflow waits for, once each, until it ends. */
async function playThePerson(progress: () => Promise<Progress>, ended: () => boolean) {
  const done = new Set<string>();
  const once = async (what: string, path: string, body?: unknown) => {
    if (done.has(what)) return;
    const status = await sandbox(path, body).catch(() => undefined);
    if (status === 200) {
      done.add(what);
      log(what);
    }
  };
  while (!ended()) {
    const p = await progress().catch(() => undefined);
    if (p?.step === 'onboarding') {
      // 404 until pixflow asked for the liveness link; 409 when this person did it before.
      await once('the person did the liveness check', '/sandbox/liveness/complete', {
        document: env.PERSON_CPF,
      });
    } else if (p?.step === 'awaiting_payment') {
      if (!done.has(p.txid)) log(`deposit ${p.txid}: the Pix code to pay is ${p.pixCode.slice(0, 30)}...`);
      done.add(p.txid);
      await once('the person paid the deposit', `/sandbox/deposits/${p.txid}/pay`);
    } else if (p?.step === 'paying_out') {
      // 404 until pixflow sent the payout.
      await once('the bank settled the prize', `/sandbox/withdrawals/${p.transactionId}/settle`);
    }
    await sleep(500);
  }
}

async function main() {
  const connection = await Connection.connect({ address: env.TEMPORAL_ADDRESS });
  await ensureNamespace(connection);
  // The SDK's default data converter: what pixflow answers comes in the clear.
  const client = new Client({ connection, namespace: env.CALLER_NAMESPACE });
  const worker = await Worker.create({
    connection: await NativeConnection.connect({ address: env.TEMPORAL_ADDRESS }),
    namespace: env.CALLER_NAMESPACE,
    taskQueue: env.CALLER_TASK_QUEUE,
    workflowsPath: require.resolve('./workflows'),
    // Puts the API key in the header of each pixflow operation its workflows start.
    interceptors: { workflowModules: [require.resolve('../../nexus/caller')] },
  });
  const running = worker.run();
  log(`worker polling ${env.CALLER_NAMESPACE}/${env.CALLER_TASK_QUEUE}`);

  const workflowId = `sign-up-${randomBytes(4).toString('hex')}`;
  const args: Parameters<typeof signUpDepositAndPayOut> = [
    {
      pixflowApiKey: env.PIXFLOW_API_KEY,
      person: { externalId: 'player-1', cpf: env.PERSON_CPF, email: 'bia@example.com', name: 'Bia Lima' },
      depositCentavos: 15_000,
      prizeCentavos: 4_990,
      txid: `${Date.now()}${randomBytes(3).readUIntBE(0, 3)}`,
    },
  ];
  // A namespace just made may take a few seconds to be known to every service: asked again for 30 s.
  for (let attempt = 0; ; attempt++) {
    try {
      await client.workflow.start<typeof signUpDepositAndPayOut>('signUpDepositAndPayOut', {
        workflowId,
        taskQueue: env.CALLER_TASK_QUEUE,
        args,
      });
      break;
    } catch (err) {
      if (attempt >= 60) throw err;
      await sleep(500);
    }
  }
  log(`started workflow ${workflowId}`);
  const handle = client.workflow.getHandle<typeof signUpDepositAndPayOut>(workflowId);
  let ended = false;
  const person = playThePerson(
    () => handle.query(progressQuery),
    () => ended,
  );
  try {
    const result = await handle.result();
    log(`onboarding ${result.onboarding.status}`);
    log(`deposit ${result.paid.status}: ${JSON.stringify(result.paid)}`);
    log(`prize ${result.payout.status}: ${JSON.stringify(result.payout)}`);
  } finally {
    ended = true;
    await person;
    worker.shutdown();
    await running;
    await connection.close();
  }
}

main().catch((err) => {
  process.stderr.write(
    `[nexus-caller] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
  );
  process.exit(1);
});
