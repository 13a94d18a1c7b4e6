import { randomBytes, randomInt } from 'node:crypto';
import { statSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { depositFinalStatuses, depositWorkflowId } from '../../contracts/deposit';
import { withdrawalFinalStatuses, withdrawalWorkflowId } from '../../contracts/withdrawal';
import { onboardPeople, ownCpfKey, type People } from '../helpers/people';
import { tcpOpen } from '../helpers/ports';
import { waitUntil } from '../helpers/wait';
import {
  alive,
  call,
  childrenOf,
  connectionOwner,
  type ProductionStack,
  peopleAt,
  providerCalls,
  sendUntilAccepted,
  startProductionStack,
  workerProcess,
} from './stack';
import { dataDirClientTls, sdkTls, temporalAnswers } from './temporal-tls';

// pixflow on the Temporal server as production runs it: every Temporal service in one
// `temporal-server` process on Postgres (schemas set up by temporal-sql-tool), two workers and
// two APIs, all real processes started by `npm start -- --temporal postgres --workers 2 --apis 2`.
// Deposits and payouts go through both APIs; the worker sending a payout is killed with SIGKILL
// while the provider has that payout and has not answered. Every flow must end as the provider
// sandbox says, every payout reach it exactly once.

const DEPOSITS = 12;
const WITHDRAWALS = 12;
/** Parallel callers. */
const CONCURRENCY = 4;
/** The worker is killed once this many requests were accepted (and both workers did work). */
const KILL_AFTER = 8;

let stack: ProductionStack;
let people: People;
const startedAt = Date.now();
const timings: Record<string, number> = {};

const deposits: string[] = [];
const withdrawals: string[] = [];
const refused: string[] = [];
const retried: string[] = [];
const killed: {
  pid?: number;
  /** 0 for worker 1. */
  index?: number;
  callsBefore?: number[];
  /** The transactionId of the payout whose create the sandbox held when the worker was killed. */
  payout?: string;
} = {};
/** Every provider call waits this long in the sandbox, so activities are in flight when one worker dies. */
const PROVIDER_LATENCY_MS = 1_000;

// biome-ignore lint/suspicious/noExplicitAny: the sandbox's JSON, read field by field
const sandbox = async (path: string, body?: unknown): Promise<any> => {
  const r = await fetch(`${stack.sandbox}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  expect(r.ok, `sandbox ${path}: ${r.status}`).toBe(true);
  return r.json();
};

/** Request i goes to API 1 or API 2 in turn. */
const apiFor = (i: number) => stack.apis[i % stack.apis.length] as string;

async function deposit(i: number) {
  const txid = `${Date.now()}${randomInt(1e6)}${i}`;
  const body = { txid, amountCentavos: 100 + randomInt(100_000), client: people.next() };
  // 200 is the same QR again: a first ask that outlived TEMPORAL_CALL_TIMEOUT_MS (503) while its
  // workflow task waited out the killed worker had started the flow, and the retry attaches to it.
  const r = await sendUntilAccepted(
    `${apiFor(i)}/v1/deposits`,
    body,
    (a) => a.status === 201 || a.status === 200,
  );
  retried.push(...r.retried.map((w) => `deposit ${txid}: ${w}`));
  if (r.accepted) deposits.push(txid);
  else refused.push(`deposit ${txid}: ${r.retried.at(-1)}`);
}

async function withdrawal(i: number) {
  const id = `prod-${i}-${randomBytes(4).toString('hex')}`;
  const amountCentavos = 100 + randomInt(100_000);
  const client = people.payee(amountCentavos);
  const body = { transactionId: id, amountCentavos, ...ownCpfKey(client), client };
  const r = await sendUntilAccepted(`${apiFor(i)}/v1/withdrawals`, body, (a) => a.status === 202);
  retried.push(...r.retried.map((w) => `withdrawal ${id}: ${w}`));
  if (r.accepted) withdrawals.push(id);
  else refused.push(`withdrawal ${id}: ${r.retried.at(-1)}`);
}

/** The answers the sandbox holds now (its `actThenFail` hang knob). */
const heldAnswers = async (): Promise<Array<{ endpoint: string; id?: string; callerPort?: number }>> =>
  (await sandbox('/sandbox/faults')).held;

/**
 * Once the load is under way and both workers made provider calls, the sandbox takes the next
 * payout and holds its answer; on its word, the worker whose sendPayoutAndRecord sent it is killed with
 * SIGKILL: the provider has the payout, the worker never learns it, and the flow must finish on
 * another worker without a second payout.
 */
async function killWorkerMidPayout(accepted: () => number) {
  await waitUntil(accepted, (n) => n >= KILL_AFTER, { timeoutMs: 120_000, intervalMs: 100 });
  // Both workers took part before one is lost: the load was spread over them.
  killed.callsBefore = await waitUntil(
    () => Promise.all(stack.workerHealth.map(providerCalls)),
    (calls) => calls.every((c) => c > 0),
    { timeoutMs: 60_000, intervalMs: 250 },
  );
  await sandbox('/sandbox/faults', { actThenFail: { withdraw: { mode: 'hang', count: 1 } } });
  // Well within the provider timeout (10 s), after which the worker would give up by itself.
  const [held] = await waitUntil(heldAnswers, (h) => h.length > 0, { timeoutMs: 60_000, intervalMs: 50 });
  expect(held).toMatchObject({
    endpoint: 'withdraw',
    id: expect.any(String),
    callerPort: expect.any(Number),
  });
  const sender = connectionOwner(
    stack.child.pid as number,
    held?.callerPort as number,
    Number(new URL(stack.sandbox).port),
  );
  expect(sender?.command, `the process that sent payout ${held?.id}`).toMatch(/worker\/main\.ts$/);
  killed.index = stack.workerHealth.findIndex((h) => new URL(h).port === sender?.env.WORKER_HTTP_PORT);
  expect(killed.index).toBeGreaterThanOrEqual(0);
  killed.payout = held?.id;
  killed.pid = sender?.pid;
  process.kill(sender?.pid as number, 'SIGKILL');
  // The sandbox's word again: the held answer went with the killed worker's connection.
  await waitUntil(heldAnswers, (h) => h.length === 0, { timeoutMs: 15_000, intervalMs: 50 });
}

/** The attempt each sendPayoutAndRecord activity of a withdrawal's run ended on, and the failure before it. */
async function sendPayoutAttempts(transactionId: string) {
  const connection = await Connection.connect({
    address: stack.temporalAddress,
    tls: sdkTls(dataDirClientTls(stack.env)),
  });
  try {
    const client = new Client({ connection, namespace: 'default' });
    const history = await client.workflow.getHandle(withdrawalWorkflowId(transactionId)).fetchHistory();
    const events = history.events ?? [];
    const sends = new Set(
      events
        .filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === 'sendPayoutAndRecord')
        .map((e) => String(e.eventId)),
    );
    return events.flatMap((e) => {
      const started = e.activityTaskStartedEventAttributes;
      if (!started || !sends.has(String(started.scheduledEventId))) return [];
      return [{ attempt: started.attempt ?? 0, timedOut: Boolean(started.lastFailure?.timeoutFailureInfo) }];
    });
  } finally {
    await connection.close();
  }
}

async function runLoad() {
  const jobs: Array<() => Promise<void>> = [];
  for (let i = 0; i < Math.max(DEPOSITS, WITHDRAWALS); i++) {
    if (i < DEPOSITS) jobs.push(() => deposit(i));
    if (i < WITHDRAWALS) jobs.push(() => withdrawal(i));
  }
  let next = 0;
  let done = 0;
  const callers = Array.from({ length: CONCURRENCY }, async () => {
    while (next < jobs.length) {
      const job = jobs[next++] as () => Promise<void>;
      await job();
      done += 1;
    }
  });
  await Promise.all([...callers, killWorkerMidPayout(() => done)]);
}

/** Every flow's state, read from either API in turn, until all are final or the deadline passes. */
async function finalStates(timeoutMs: number) {
  const flows = [
    ...deposits.map((id) => ({
      path: `/v1/deposits/${id}`,
      final: depositFinalStatuses as readonly string[],
    })),
    ...withdrawals.map((id) => ({
      path: `/v1/withdrawals/${id}`,
      final: withdrawalFinalStatuses as readonly string[],
    })),
  ];
  const states = new Map<string, string>();
  await waitUntil(
    async () => {
      let i = 0;
      for (const f of flows) {
        if (f.final.includes(states.get(f.path) ?? '')) continue;
        const r = await call(`${apiFor(i++)}${f.path}`).catch(() => undefined);
        if (r?.status === 200) states.set(f.path, r.body.state.status);
      }
      return flows.filter((f) => !f.final.includes(states.get(f.path) ?? '')).length;
    },
    (open) => open === 0,
    { timeoutMs, intervalMs: 1_000 },
  ).catch(() => {}); // the states, checked next, say which did not end
  return states;
}

describe.sequential('pixflow on the Temporal server on Postgres: 2 workers, 2 APIs', () => {
  beforeAll(async () => {
    stack = await startProductionStack();
    timings.startMs = Date.now() - startedAt;
    // People may move money only once onboarded and verified, through the second API.
    people = await onboardPeople(peopleAt(stack.apis[1] ?? '', stack), 4);
    timings.onboardedMs = Date.now() - startedAt;
  }, 360_000);

  afterAll(async () => {
    process.stderr.write(`[production] ${JSON.stringify({ timings, killed, retried: retried.length })}\n`);
    if (stack && stack.child.exitCode === null) await stack.stop();
  }, 60_000);

  it('starts every part the banner lists: two APIs, two workers, each on its own ports', async () => {
    expect(stack.apis).toHaveLength(2);
    expect(stack.workerHealth).toHaveLength(2);
    expect(new Set([...stack.apis, ...stack.workerHealth].map((u) => new URL(u).port)).size).toBe(4);
    for (const api of stack.apis)
      expect((await call(`${api}/readyz`)).body).toMatchObject({ temporal: 'ok' });
    for (const health of stack.workerHealth) expect((await fetch(health)).status).toBe(200);
    expect(stack.output()).toMatch(/server 1\.29\.1 on Postgres, 4 history shards/);
  });

  it('serves only clients with a certificate of its CA: plain TCP and TLS without one are refused', async () => {
    const tls = dataDirClientTls(stack.env);
    expect(await temporalAnswers(stack.temporalAddress, undefined)).not.toBe('served');
    const { clientCertPair: _none, ...withoutCert } = sdkTls(tls);
    expect(await temporalAnswers(stack.temporalAddress, withoutCert)).not.toBe('served');
    expect(await temporalAnswers(stack.temporalAddress, sdkTls(tls))).toBe('served');
    // The certificate's key is its owner's alone.
    expect(statSync(tls.key).mode & 0o777).toBe(0o600);
    // Every worker and API talks to it with the client certificate.
    const parts = childrenOf(stack.child.pid as number).filter((p) =>
      /(worker|api)\/main\.ts$/.test(p.command),
    );
    expect(parts).toHaveLength(4);
    for (const p of parts)
      expect(p.env, p.command).toMatchObject({
        TEMPORAL_TLS_CERT_PATH: tls.cert,
        TEMPORAL_TLS_KEY_PATH: tls.key,
      });
  });

  it('moves money through both APIs while the worker sending a payout is killed: every flow ends, every payout is sent once', async () => {
    await sandbox('/sandbox/auto', { payDepositsAfterMs: 1_500, settleWithdrawalsAfterMs: 2_000 });
    await sandbox('/sandbox/faults', { latency: { fixedMs: PROVIDER_LATENCY_MS } });
    await runLoad();
    timings.loadMs = Date.now() - startedAt;
    expect(refused).toEqual([]);
    expect(killed.pid).toBeGreaterThan(0);
    expect(alive(killed.pid as number)).toBe(false);

    const states = await finalStates(240_000);
    timings.settledMs = Date.now() - startedAt;
    const wrong = [
      ...deposits.map((id) => `/v1/deposits/${id}`),
      ...withdrawals.map((id) => `/v1/withdrawals/${id}`),
    ]
      .map((p) => `${p} ${states.get(p)}`)
      .filter((line) => !line.endsWith(' completed'));
    expect(wrong).toEqual([]);

    // The provider's own records: each deposit paid, each payout received once, and no other.
    const sb = await sandbox('/sandbox/state');
    const paid = new Set(
      sb.deposits
        .filter((d: { status: string }) => d.status === 'completed')
        .map((d: { txid: string }) => d.txid),
    );
    expect(deposits.filter((id) => !paid.has(id))).toEqual([]);
    expect(sb.withdrawals.map((w: { txid: string }) => w.txid).sort()).toEqual([...withdrawals].sort());
    const payouts = Object.fromEntries(withdrawals.map((id) => [id, sb.counters.payouts[id] ?? 0]));
    expect(payouts).toEqual(Object.fromEntries(withdrawals.map((id) => [id, 1])));
    // The payout cut short: its sendPayoutAndRecord timed out on the killed worker and a later attempt
    // finished it. That attempt looked the payout up before sending, found it, and sent nothing:
    // the provider never saw a create twice, so it refused none as a duplicate.
    expect(withdrawals).toContain(killed.payout);
    const attempts = await sendPayoutAttempts(killed.payout as string);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]?.attempt).toBeGreaterThanOrEqual(2);
    expect(attempts[0]?.timedOut).toBe(true);
    expect(sb.counters.duplicateWithdrawalsRejected).toBe(0);
  }, 420_000);

  it('starts the killed worker again on its ports while the other carried on', async () => {
    const health = stack.workerHealth[killed.index as number] as string;
    const name = `worker ${(killed.index as number) + 1}`;
    await waitUntil(
      () => stack.output().includes(`${name} is back`),
      (back) => back,
      { timeoutMs: 120_000, intervalMs: 250 },
    );
    expect(stack.output()).toContain(`${name} exited (SIGKILL); starting it again`);
    expect((await fetch(health)).status).toBe(200);
    const again = workerProcess(stack, health);
    expect(again?.pid).toBeGreaterThan(0);
    expect(again?.pid).not.toBe(killed.pid);
  }, 150_000);

  it('keeps the flows in Postgres, listed by pixflow search attributes in the visibility store', async () => {
    const connection = await Connection.connect({
      address: stack.temporalAddress,
      tls: sdkTls(dataDirClientTls(stack.env)),
    });
    try {
      const client = new Client({ connection, namespace: 'default' });
      const count = async (type: string) =>
        (await client.workflow.count(`PixflowType = "${type}" AND ExecutionStatus = "Completed"`)).count;
      // Visibility is written a moment after each flow closes.
      await waitUntil(count.bind(null, 'withdrawal'), (n) => n === WITHDRAWALS, 30_000);
      await waitUntil(count.bind(null, 'deposit'), (n) => n === DEPOSITS, 30_000);
    } finally {
      await connection.close();
    }
    const url = new URL(stack.databaseUrl);
    url.pathname = '/temporal_visibility';
    const db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    try {
      const ids = [
        ...deposits.map((t) => depositWorkflowId(t)),
        ...withdrawals.map((t) => withdrawalWorkflowId(t)),
      ];
      // Status 2: completed.
      const rows = await db.query(
        'SELECT workflow_id FROM executions_visibility WHERE workflow_id = ANY($1) AND status = 2',
        [ids],
      );
      expect(rows.rows.map((r) => r.workflow_id).sort()).toEqual([...ids].sort());
    } finally {
      await db.end();
    }
  });

  it('stops every process it started on SIGTERM', async () => {
    const procs = childrenOf(stack.child.pid as number);
    const names = procs.map((p) => p.command);
    for (const part of ['temporal-server', 'postgres', 'sandbox/main.ts', 'worker/main.ts', 'api/main.ts'])
      expect(
        names.some((c) => c.includes(part)),
        part,
      ).toBe(true);
    const ports = [...stack.apis, ...stack.workerHealth].map((u) => Number(new URL(u).port));
    ports.push(stack.ports.PIXFLOW_TEMPORAL_PORT as number, stack.ports.EMBEDDED_PG_PORT as number);
    expect(await stack.stop()).toBe(0);
    const left = async () => ({
      procs: procs.filter((p) => alive(p.pid)).map((p) => p.command.slice(0, 80)),
      open: (await Promise.all(ports.map(async (p) => ((await tcpOpen(p)) ? p : 0)))).filter(Boolean),
    });
    expect(await waitUntil(left, (l) => l.procs.length + l.open.length === 0, 15_000).catch(left)).toEqual({
      procs: [],
      open: [],
    });
    expect(stack.output()).toContain('pixflow stopped (SIGTERM): every part is down.');
    timings.totalMs = Date.now() - startedAt;
  }, 60_000);
});
