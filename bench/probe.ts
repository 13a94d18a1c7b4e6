import { randomBytes } from 'node:crypto';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import pg from 'pg';
import { newTxid } from '../api/route-helpers';
import { depositWorkflowId } from '../contracts/deposit';
import { ownCpfKey, type People } from '../scripts/people';
import type { FloorShape } from './floor-workflow';
import { type Bench, connect, startStack } from './harness';
import type { SandboxState } from './pixflow';
import { cpuMsBetween, cpuSnapshot } from './proc';
import { API_KEY, type BenchStack } from './stack';
import { percentile, round } from './stats';
import { launchFloor } from './steps/floor';
import { readDepositShape } from './steps/shape';

// `npm run bench:probe`: where the time of one answer goes. It sends PROBE_N requests at
// PROBE_RATE a second (open loop) to a fresh stack, as the bench's latency step does, and splits
// each answer into stages read from its flow's history:
//   api → started   request sent → WorkflowExecutionStarted (the API, the server's start)
//   dispatch        first workflow task scheduled → started (the server hands it to a poller)
//   first task      its start → completion (the worker; a deposit's QR local activity is in it),
//                   for a deposit split where the provider received the charge (the sandbox's
//                   createdAt) and where its flows row was written (the event's created_at):
//     → provider      the SDK runs the new workflow until it asks for the activity, which calls
//     → row           the provider's answer, and the transaction that writes the row begins
//     → task done     the row, the activity's result back to the workflow, the task's completion
//   → answer        its completion → the answer received (the update's result back through the API)
// and prints the CPU each process of the stack used meanwhile. PROBE_KIND `floor` sends the
// deposit-shaped floor workflow's update-with-start instead (steps/floor.ts), straight to
// Temporal as the bench's floor is driven: the same stages with no API and no provider, to set
// the deposit's beside. Not a goal: a tool to find one.

type Kind = 'deposits' | 'withdrawals' | 'floor';
const kind = (process.env.PROBE_KIND ?? 'deposits') as Kind;
const rate = Number(process.env.PROBE_RATE ?? 10);
const n = Number(process.env.PROBE_N ?? 400);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tag = randomBytes(3).toString('hex');
type Event = temporal.api.history.v1.IHistoryEvent;
const at = (e: Event | undefined) =>
  e?.eventTime ? Number(e.eventTime.seconds) * 1000 + Number(e.eventTime.nanos) / 1e6 : Number.NaN;

interface Answer {
  workflowId: string;
  sent: number;
  answered: number;
}

async function post(url: string, body: unknown) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as { workflowId?: string } };
}

let seq = 0;
/** The next POST's body: a deposit, or a payout to the person's own CPF key; for one of `people` in turn. */
function nextBody(people: People, amountCentavos: number) {
  if (kind === 'deposits') return { txid: newTxid(), amountCentavos, client: people.next() };
  const client = people.payee(amountCentavos);
  return { transactionId: `probe-${tag}-${seq}`, amountCentavos, ...ownCpfKey(client), client };
}

/** One request of the probe's kind, timed from sent to answered. */
async function one(b: Bench, floor: FloorShape | undefined): Promise<Answer> {
  if (floor) {
    const sent = Date.now();
    const r = await launchFloor(b, floor);
    if (!r.ok || r.latencyMs === undefined) throw new Error(`floor update-with-start failed: ${r.id}`);
    return { workflowId: r.id, sent, answered: sent + r.latencyMs };
  }
  const { stack, people } = b;
  seq += 1;
  const body = nextBody(people, 100 + seq);
  const sent = Date.now();
  const r = await post(`${stack.api}/v1/${kind}`, body);
  if (r.status >= 300 || !r.body.workflowId)
    throw new Error(`POST answered ${r.status}: ${JSON.stringify(r.body)}`);
  return { workflowId: r.body.workflowId, sent, answered: Date.now() };
}

/** `count` requests at `rate` a second, open loop. */
async function offer(b: Bench, floor: FloorShape | undefined, count: number): Promise<Answer[]> {
  const t0 = Date.now();
  const all: Promise<Answer>[] = [];
  for (let i = 0; i < count; i++) {
    await sleep(Math.max(0, t0 + (i * 1000) / rate - Date.now()));
    all.push(one(b, floor));
  }
  return Promise.all(all);
}

/** A deposit's first-task marks, by workflow id: provider received it, its flows row written (ms). */
type Marks = Map<string, { atProvider: number; rowWritten: number }>;

async function depositMarks(stack: BenchStack, answers: Answer[]): Promise<Marks> {
  const marks: Marks = new Map();
  if (kind !== 'deposits') return marks;
  const state = (await (await fetch(`${stack.sandbox}/sandbox/state`)).json()) as SandboxState;
  const atProvider = new Map(state.deposits.map((d) => [depositWorkflowId(d.txid), Date.parse(d.createdAt)]));
  const db = new pg.Client({ connectionString: stack.databaseUrl });
  await db.connect();
  try {
    const { rows } = await db.query<{ stream_id: string; at: Date }>(
      `SELECT stream_id, created_at AS at FROM events WHERE stream_id = ANY($1) AND type = 'deposit.awaiting_payment'`,
      [answers.map((a) => a.workflowId)],
    );
    for (const r of rows) {
      const provider = atProvider.get(r.stream_id);
      if (provider !== undefined)
        marks.set(r.stream_id, { atProvider: provider, rowWritten: r.at.getTime() });
    }
  } finally {
    await db.end();
  }
  return marks;
}

/** One answer's stages, read from its flow's history. */
async function stages(client: Client, a: Answer, marks: Marks) {
  const events = (await client.workflow.getHandle(a.workflowId).fetchHistory()).events ?? [];
  const first = (key: keyof Event) => at(events.find((e) => e[key]));
  const started = first('workflowExecutionStartedEventAttributes');
  const taskStarted = first('workflowTaskStartedEventAttributes');
  const taskDone = first('workflowTaskCompletedEventAttributes');
  const m = marks.get(a.workflowId);
  return {
    'api → started': started - a.sent,
    dispatch: taskStarted - first('workflowTaskScheduledEventAttributes'),
    'first task': taskDone - taskStarted,
    ...(m
      ? {
          '  → provider': m.atProvider - taskStarted,
          '  → row': m.rowWritten - m.atProvider,
          '  → task done': taskDone - m.rowWritten,
        }
      : {}),
    '→ answer': a.answered - taskDone,
  };
}

function printReport(answers: Answer[], split: Awaited<ReturnType<typeof stages>>[], cpuShare: string[]) {
  const row = (name: string, v: number[]) =>
    `${name.padEnd(16)} p50 ${round(percentile(v, 50), 0)}  p90 ${round(percentile(v, 90), 0)}  p99 ${round(percentile(v, 99), 0)} ms`;
  console.log(`${n} ${kind === 'floor' ? 'floor update-with-start' : `POST /v1/${kind}`} at ${rate}/s`);
  console.log(
    row(
      'answer',
      answers.map((a) => a.answered - a.sent),
    ),
  );
  for (const name of Object.keys(split[0] ?? {}) as (keyof (typeof split)[number])[]) {
    const values = split.map((x) => x[name]).filter((v): v is number => v !== undefined);
    console.log(row(name, values));
  }
  console.log(`CPU, % of one core: ${cpuShare.join(', ')}`);
}

async function main() {
  const b = await connect(await startStack());
  try {
    const { stack } = b;
    await post(`${stack.sandbox}/sandbox/auto`, { payDepositsAfterMs: 100, settleWithdrawalsAfterMs: 100 });
    const floor = kind === 'floor' ? (await readDepositShape(b)).shape : undefined;
    await offer(b, floor, 30); // warm-up, not counted
    const cpu0 = cpuSnapshot(stack.child.pid as number, b.floorPids);
    const answers = await offer(b, floor, n);
    const cpu1 = cpuSnapshot(stack.child.pid as number, b.floorPids);
    const seconds = (cpu1.at - cpu0.at) / 1000;
    const marks = await depositMarks(stack, answers);
    const split = await Promise.all(answers.map((a) => stages(b.client, a, marks)));
    const share = Object.entries(cpuMsBetween(cpu0, cpu1)).map(
      ([part, ms]) => `${part} ${Math.round(ms / seconds / 10)}%`,
    );
    printReport(answers, split, share);
  } finally {
    await b.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
