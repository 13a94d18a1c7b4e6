import { type ChildProcess, spawn } from 'node:child_process';
import { randomInt } from 'node:crypto';
import path from 'node:path';
import { Client, Connection, isGrpcServiceError } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../common/logger';
import { depositWorkflowId } from '../../contracts/deposit';
import { reconcilerWorkflowId } from '../../contracts/reconciler';
import { withdrawalWorkflowId } from '../../contracts/withdrawal';
import { clientTlsEnv } from '../../scripts/temporal-certs';
import { ROOT } from '../../scripts/temporal-tools';
import { promoteWhenNewest } from '../../worker/versioning';
import { newPerson, ownCpfKey } from '../helpers/people';
import { freePort } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';
import { API_KEY, alive, call, type ProductionStack, startProductionStack, workerProcess } from './stack';
import { dataDirClientTls, sdkTls } from './temporal-tls';

// A rolling upgrade on the Temporal server as production runs it (on Postgres): npm start's
// worker runs build A; a worker of build B (the same code under another build id) joins and,
// being the newest, becomes the deployment's current version. Deposits started on A finish on A
// (pinned) while new ones start on B; a held deposit and the reconciler move to B at their next
// workflow task; A drains, its worker is stopped, and nothing is lost: every flow that finished on
// A (deposits, a withdrawal, a biometric identification) still reads through the API.

const { EventType, VersionDrainageStatus, VersioningBehavior, WorkflowExecutionStatus } =
  temporal.api.enums.v1;
const NAMESPACE = 'default';
const DEPLOYMENT = 'pixflow';
const ON_EACH_BUILD = 3;
/** Someone who is not the depositor: their payment is held for an operator. */
const OTHER_PAYER = '52998224725';
/** A sandbox test document whose onboarding and every biometric identification complete on their own. */
const IDENTIFIED = '73628883504';

let stack: ProductionStack;
let client: Client;
let connection: Connection;
let workerB: ChildProcess | undefined;
let workerBOutput = '';
const startedAt = Date.now();
const timings: Record<string, number> = {};

interface WorkerHealth {
  status: string;
  deploymentName: string;
  buildId: string;
  promotion?: string;
}
const health = async (url: string): Promise<WorkerHealth | undefined> =>
  fetch(url, { signal: AbortSignal.timeout(2_000) })
    .then((r) => r.json() as Promise<WorkerHealth>)
    .catch(() => undefined);

const sandbox = async (path: string, body: unknown) => {
  const r = await fetch(`${stack.sandbox}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  expect(r.ok, `sandbox ${path}: ${r.status}`).toBe(true);
};

interface Deposit {
  txid: string;
  cpf: string;
  /** What it was asked with: the same request again is a repeat. */
  request: { txid: string; amountCentavos: number; client: ReturnType<typeof newPerson> };
  /** The QR it was answered. */
  payload: string;
}

/** A deposit through the API, once the QR is there. */
async function deposit(): Promise<Deposit> {
  const person = newPerson();
  const request = {
    txid: `${Date.now()}${randomInt(1e6)}`,
    amountCentavos: 100 + randomInt(10_000),
    client: person,
  };
  const r = await call(`${stack.api}/v1/deposits`, request);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  return { txid: request.txid, cpf: person.cpf, request, payload: r.body.payload };
}

const pay = (d: { txid: string }, payerCpf: string) =>
  sandbox(`/sandbox/deposits/${d.txid}/pay`, { payerName: 'Payer', payerCpf });

const depositStatus = async (txid: string) =>
  (await call(`${stack.api}/v1/deposits/${txid}`)).body?.state?.status;

const stateAt = async (path: string) => (await call(`${stack.api}${path}`)).body?.state;

/** A payout to the person's own CPF key, under the step-up bound. */
function withdrawalBody() {
  const person = newPerson();
  return {
    transactionId: `rolling-${Date.now()}${randomInt(1e6)}`,
    amountCentavos: 100 + randomInt(10_000),
    ...ownCpfKey(person),
    client: person,
  };
}

/**
 * A biometric identification of an approved person: the onboarding (its liveness completed in
 * the sandbox approves it), then the identification's link, completed in the sandbox too.
 */
async function biometricIdentification(cpf: string) {
  const started = await call(`${stack.api}/v1/onboardings`, { cpf, plan: 'plan_basic', event: 'signup' });
  expect([200, 201], JSON.stringify(started.body)).toContain(started.status);
  await waitUntil(
    () => stateAt(`/v1/onboardings/${cpf}`),
    (s) => s?.status === 'awaiting_liveness',
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  await sandbox('/sandbox/liveness/complete', { document: cpf });
  await waitUntil(
    () => stateAt(`/v1/onboardings/${cpf}`),
    (s) => s?.status === 'approved',
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  const link = await call(`${stack.api}/v1/onboardings/${cpf}/liveness-link`, {});
  expect(link.status, JSON.stringify(link.body)).toBe(200);
  expect(link.body.type).toBe('biometric_identification');
  await sandbox('/sandbox/liveness/complete', { document: cpf });
  await waitUntil(
    () => stateAt(`/v1/biometrics/${cpf}`),
    (s) => s?.status === 'passed',
    { timeoutMs: 30_000, intervalMs: 250 },
  );
  return link.body.workflowId as string;
}

async function describeDeployment() {
  const { workerDeploymentInfo } = await client.workflowService.describeWorkerDeployment({
    namespace: NAMESPACE,
    deploymentName: DEPLOYMENT,
  });
  return workerDeploymentInfo;
}

/** gRPC's status code for NOT_FOUND. */
const GRPC_NOT_FOUND = 5;

/**
 * The deployment, or undefined while the server answers NOT_FOUND for it: under the full suite's
 * load it has answered so once for a deployment it had just described, while waiting for a
 * version to drain.
 */
async function describeDeploymentWhenFound() {
  try {
    return await describeDeployment();
  } catch (err) {
    if (isGrpcServiceError(err) && err.code === GRPC_NOT_FOUND) return undefined;
    throw err;
  }
}

/** A run's versioning info as the server keeps it: its behavior and the build it is on. */
async function versioningOf(workflowId: string) {
  const d = await client.workflowService.describeWorkflowExecution({
    namespace: NAMESPACE,
    execution: { workflowId },
  });
  const info = d.workflowExecutionInfo?.versioningInfo;
  return {
    type: d.workflowExecutionInfo?.type?.name,
    behavior: VersioningBehavior[info?.behavior ?? 0],
    buildId: info?.deploymentVersion?.buildId,
  };
}

/** The build of every workflow task a run completed, in order. */
async function taskBuilds(workflowId: string, runId?: string): Promise<string[]> {
  const { history } = await client.workflowService.getWorkflowExecutionHistory({
    namespace: NAMESPACE,
    execution: { workflowId, ...(runId ? { runId } : {}) },
  });
  return (history?.events ?? [])
    .filter((e) => e.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
    .map((e) => e.workflowTaskCompletedEventAttributes?.deploymentVersion?.buildId ?? '(none)');
}

function startWorkerB(buildId: string, ports: { http: number; sdk: number }, healthA: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'worker/main.ts')], {
    cwd: ROOT,
    env: {
      // Configured as build A's worker is (its connectors among it), as a deployment would.
      ...(workerProcess(stack, healthA)?.env ?? stack.env),
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      // The client certificate npm start gives its own workers.
      ...clientTlsEnv(dataDirClientTls(stack.env)),
      WORKER_HTTP_PORT: String(ports.http),
      WORKER_SDK_METRICS_PORT: String(ports.sdk),
      WORKER_BUILD_ID: buildId,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const collect = (b: Buffer) => {
    workerBOutput = (workerBOutput + b.toString('utf8')).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  return child;
}

describe.sequential('a rolling upgrade of the workers on the Temporal server on Postgres', () => {
  let healthA: string;
  let buildA: string;
  let buildB: string;
  let healthB: string;
  const onA: Deposit[] = [];
  const onB: Deposit[] = [];
  let held: Deposit;
  let withdrawalOnA: ReturnType<typeof withdrawalBody>;
  /** What the API answered for each flow that finished on A, while A's worker still ran. */
  const readOnA: { path: string; status: string; body: unknown }[] = [];

  beforeAll(async () => {
    stack = await startProductionStack({
      args: ['--temporal', 'postgres', '--workers', '1'],
      // Anyone may deposit and be paid here: the people's onboarding is not what this test is about.
      env: { REQUIRE_VERIFIED_FOR_DEPOSITS: 'false', REQUIRE_VERIFIED_FOR_WITHDRAWALS: 'false' },
    });
    timings.startMs = Date.now() - startedAt;
    connection = await Connection.connect({
      address: stack.temporalAddress,
      tls: sdkTls(dataDirClientTls(stack.env)),
    });
    client = new Client({ connection, namespace: NAMESPACE });
    healthA = stack.workerHealth[0] as string;
  }, 360_000);

  afterAll(async () => {
    process.stderr.write(`[rolling-upgrade] ${JSON.stringify({ timings, buildA, buildB })}\n`);
    if (workerB && workerB.exitCode === null) {
      const gone = new Promise((r) => workerB?.once('exit', r));
      workerB.kill('SIGTERM');
      await Promise.race([gone, new Promise((r) => setTimeout(r, 15_000))]);
      if (workerB.exitCode === null) workerB.kill('SIGKILL');
    }
    await connection?.close();
    if (stack && stack.child.exitCode === null) await stack.stop();
  }, 60_000);

  it("starts npm start's worker as build A, the deployment's current version", async () => {
    const a = await health(healthA);
    expect(a).toMatchObject({ status: 'ok', deploymentName: DEPLOYMENT, promotion: 'current' });
    buildA = a?.buildId as string;
    expect(buildA).toMatch(/^\d+\.\d+\.\d+\+/);
    expect(stack.output()).toContain(`worker build      ${buildA} (deployment ${DEPLOYMENT}, current)`);
    const info = await describeDeployment();
    expect(info?.routingConfig?.currentDeploymentVersion?.buildId).toBe(buildA);
  });

  it('pins deposits started on A to A; a held one continues on its own, auto-upgrading', async () => {
    for (let i = 0; i < ON_EACH_BUILD; i++) onA.push(await deposit());
    held = await deposit();
    await pay(held, OTHER_PAYER);
    await waitUntil(
      () => depositStatus(held.txid),
      (s) => s === 'held',
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    for (const d of onA) {
      expect(await versioningOf(depositWorkflowId(d.txid))).toEqual({
        type: 'depositWorkflow',
        behavior: 'VERSIONING_BEHAVIOR_PINNED',
        buildId: buildA,
      });
    }
    expect(await versioningOf(depositWorkflowId(held.txid))).toEqual({
      type: 'heldDepositWorkflow',
      behavior: 'VERSIONING_BEHAVIOR_AUTO_UPGRADE',
      buildId: buildA,
    });
    timings.onAMs = Date.now() - startedAt;
  }, 60_000);

  it('runs a withdrawal and a biometric identification on A, to their end', async () => {
    withdrawalOnA = withdrawalBody();
    const sent = await call(`${stack.api}/v1/withdrawals`, withdrawalOnA);
    expect(sent.status, JSON.stringify(sent.body)).toBe(202);
    const identification = await biometricIdentification(IDENTIFIED);
    expect(identification).toMatch(/^biometrics-/);
    const payout = `/v1/withdrawals/${withdrawalOnA.transactionId}`;
    await waitUntil(
      () => stateAt(payout),
      (s) => s?.status === 'processing',
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    await sandbox(`/sandbox/withdrawals/${withdrawalOnA.transactionId}/settle`, {});
    await waitUntil(
      () => stateAt(payout),
      (s) => s?.status === 'completed',
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    for (const [workflowId, type] of [
      [withdrawalWorkflowId(withdrawalOnA.transactionId), 'withdrawalWorkflow'],
      [identification, 'biometricsWorkflow'],
    ]) {
      expect(await versioningOf(workflowId as string)).toEqual({
        type,
        behavior: 'VERSIONING_BEHAVIOR_PINNED',
        buildId: buildA,
      });
    }
    timings.otherFlowsOnAMs = Date.now() - startedAt;
  }, 90_000);

  it('makes build B, which joins later, the current version: new deposits start on B', async () => {
    buildB = `${buildA}-b`;
    const ports = { http: await freePort(), sdk: await freePort() };
    healthB = `http://127.0.0.1:${ports.http}/healthz`;
    workerB = startWorkerB(buildB, ports, healthA);
    const b = await waitUntil(
      () => health(healthB),
      (h) => h?.status === 'ok',
      {
        timeoutMs: 120_000,
        intervalMs: 500,
        onTimeout: () => new Error(`worker B never became healthy:\n${workerBOutput}`),
      },
    );
    expect(b).toMatchObject({ deploymentName: DEPLOYMENT, buildId: buildB, promotion: 'current' });
    timings.bCurrentMs = Date.now() - startedAt;
    const info = await describeDeployment();
    expect(info?.routingConfig?.currentDeploymentVersion?.buildId).toBe(buildB);
    // A worker of A started again now (as a crash restarts one) finds B newer and leaves it current.
    const restartedA = await promoteWhenNewest(
      client,
      NAMESPACE,
      { deploymentName: DEPLOYMENT, buildId: buildA },
      { log: createLogger('rolling-upgrade', 'silent'), retryMs: 500, stopped: () => false },
    );
    expect(restartedA).toBe('newer-exists');
    expect((await describeDeployment())?.routingConfig?.currentDeploymentVersion?.buildId).toBe(buildB);

    for (let i = 0; i < ON_EACH_BUILD; i++) onB.push(await deposit());
    for (const d of onB) {
      expect(await versioningOf(depositWorkflowId(d.txid))).toMatchObject({
        behavior: 'VERSIONING_BEHAVIOR_PINNED',
        buildId: buildB,
      });
    }
  }, 180_000);

  it('finishes the deposits of A on A and those of B on B; the held deposit and the reconciler move to B', async () => {
    for (const d of [...onA, ...onB]) await pay(d, d.cpf);
    const resolved = await call(`${stack.api}/v1/deposits/${held.txid}/resolution`, {
      decision: 'accept',
      by: 'ops@example.com',
      reason: 'paid by a relative, documented',
    });
    expect(resolved.status, JSON.stringify(resolved.body)).toBe(200);
    expect(resolved.body.status).toBe('completed');
    await waitUntil(
      async () => Promise.all([...onA, ...onB].map((d) => depositStatus(d.txid))),
      (all) => all.every((s) => s === 'completed'),
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    for (const [deposits, build] of [
      [onA, buildA],
      [onB, buildB],
    ] as const) {
      for (const d of deposits) {
        const builds = await taskBuilds(depositWorkflowId(d.txid));
        expect(builds.length, d.txid).toBeGreaterThan(1);
        expect(new Set(builds), d.txid).toEqual(new Set([build]));
      }
    }
    // What a caller reads of every flow that finished on A, while A's worker still runs.
    for (const [path, status] of [
      // The held deposit started on A too; its last run, continued from it, ended on B.
      ...[...onA, held].map((d) => [`/v1/deposits/${d.txid}`, 'completed']),
      [`/v1/withdrawals/${withdrawalOnA.transactionId}`, 'completed'],
      [`/v1/biometrics/${IDENTIFIED}`, 'passed'],
      [`/v1/onboardings/${IDENTIFIED}`, 'approved'],
    ] as const) {
      const r = await call(`${stack.api}${path}`);
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body.state.status, path).toBe(status);
      readOnA.push({ path, status, body: r.body });
    }
    // The held deposit's run: its first task on A (where its deposit run continued it), the
    // resolution's on B.
    const heldBuilds = await taskBuilds(depositWorkflowId(held.txid));
    expect(heldBuilds[0]).toBe(buildA);
    expect(heldBuilds.at(-1)).toBe(buildB);
    expect((await versioningOf(depositWorkflowId(held.txid))).buildId).toBe(buildB);
    // The reconciler sweeps every half second: its next task after the switch ran on B.
    await waitUntil(
      () => versioningOf(reconcilerWorkflowId('pixflow')),
      (v) => v.buildId === buildB,
      { timeoutMs: 30_000, intervalMs: 500 },
    );
    timings.settledMs = Date.now() - startedAt;
  }, 120_000);

  it('drains A once its last pinned deposit has ended; its worker then stops, and B carries on', async () => {
    const drained = await waitUntil(
      async () =>
        (await describeDeploymentWhenFound())?.versionSummaries?.find(
          (v) => v.deploymentVersion?.buildId === buildA,
        ),
      (a) => a?.drainageInfo?.status === VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED,
      { timeoutMs: 90_000, intervalMs: 1_000 },
    );
    expect(drained?.drainageInfo?.status).toBe(VersionDrainageStatus.VERSION_DRAINAGE_STATUS_DRAINED);
    timings.drainedMs = Date.now() - startedAt;

    const a = workerProcess(stack, healthA);
    expect(a, "build A's worker among npm start's processes").toBeDefined();
    process.kill(a?.pid as number, 'SIGTERM');
    await waitUntil(
      () => alive(a?.pid as number),
      (up) => !up,
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    // npm start sees it exit a moment after it is gone.
    await waitUntil(
      () => stack.output().includes('worker stopped (code 0): not started again'),
      (said) => said,
      { timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(stack.child.exitCode).toBeNull();

    const after = await deposit();
    expect(await versioningOf(depositWorkflowId(after.txid))).toMatchObject({ buildId: buildB });
    await pay(after, after.cpf);
    await waitUntil(
      () => depositStatus(after.txid),
      (s) => s === 'completed',
      { timeoutMs: 30_000, intervalMs: 250 },
    );
    // None lost: every deposit of either build ended, and the provider was paid for each, as
    // Temporal's records and the flows table say.
    const all = [...onA, ...onB, held, after];
    for (const d of all) {
      const { workflowExecutionInfo } = await client.workflowService.describeWorkflowExecution({
        namespace: NAMESPACE,
        execution: { workflowId: depositWorkflowId(d.txid) },
      });
      expect(WorkflowExecutionStatus[workflowExecutionInfo?.status ?? 0], d.txid).toBe(
        'WORKFLOW_EXECUTION_STATUS_COMPLETED',
      );
    }
    const db = new pg.Client({ connectionString: stack.databaseUrl });
    await db.connect();
    try {
      const { rows } = await db.query('SELECT business_id, status FROM flows WHERE business_id = ANY($1)', [
        all.map((d) => d.txid),
      ]);
      expect(Object.fromEntries(rows.map((r) => [r.business_id, r.status]))).toEqual(
        Object.fromEntries(all.map((d) => [d.txid, 'completed'])),
      );
    } finally {
      await db.end();
    }
    timings.stoppedMs = Date.now() - startedAt;
  }, 150_000);

  it("reads every flow that finished on A through the API once A's workers are gone", async () => {
    // A query of a closed pinned run goes to its build's workers, and there are none: the API
    // reads a closed flow from what its run returned.
    for (const { path, body } of readOnA) {
      const r = await call(`${stack.api}${path}`);
      expect(r.status, `${path}: ${JSON.stringify(r.body)}`).toBe(200);
      expect(r.body, path).toEqual(body);
    }
    // The deposits' QR, as the PNG route and a repeated request answer it.
    for (const d of [...onA, held]) {
      const png = await fetch(`${stack.api}/v1/deposits/${d.txid}/qrcode.png`, {
        headers: { authorization: `Bearer ${API_KEY}` },
        signal: AbortSignal.timeout(30_000),
      });
      expect(png.status, d.txid).toBe(200);
      expect(png.headers.get('content-type')).toBe('image/png');
      const again = await call(`${stack.api}/v1/deposits`, d.request);
      expect(again.status, JSON.stringify(again.body)).toBe(200);
      expect(again.body).toMatchObject({ workflowId: depositWorkflowId(d.txid), payload: d.payload });
    }
    // A withdrawal asked for again answers its outcome (202).
    const again = await call(`${stack.api}/v1/withdrawals`, withdrawalOnA);
    expect(again.status, JSON.stringify(again.body)).toBe(202);
    expect(again.body.state.status).toBe('completed');
    const receipt = await fetch(`${stack.api}/v1/withdrawals/${withdrawalOnA.transactionId}/receipt.png`, {
      headers: { authorization: `Bearer ${API_KEY}` },
      signal: AbortSignal.timeout(30_000),
    });
    expect(receipt.status).toBe(200);
    timings.totalMs = Date.now() - startedAt;
  }, 120_000);
});
