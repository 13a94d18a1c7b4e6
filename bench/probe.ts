import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { newTxid } from '../starters/deposit';
import { ownCpfKey, type People } from '../test/helpers/people';
import type { FloorShape } from './floor-workflow';
import { type Bench, runOnFreshStack } from './harness';
import { busiestThreads, cpuMsBetween, cpuPercentBetween, cpuSnapshot, threadTicks } from './proc';
import { API_KEY } from './stack';
import { type Answer, depositMarks, type Stages, stageReport, stagesOf } from './stages';
import { round, summarize } from './stats';
import { type Receiver, startReceiver } from './steps/events';
import { launchFloor } from './steps/floor';
import { readDepositShape } from './steps/shape';

// `npm run bench:probe`: where the time of one answer goes. It sends PROBE_N requests at
// PROBE_RATE a second (open loop) to a fresh stack, as the bench's latency step does, splits
// each answer into the stages of stages.ts, and prints the CPU each process of the stack used
// meanwhile. PROBE_KIND `floor` sends the deposit-shaped floor workflow's update-with-start
// instead (steps/floor.ts), straight to Temporal as the bench's floor is driven: the same stages
// with no API and no provider, to set the deposit's beside. Not a goal: a tool to find one.
// PROBE_JSON names a file for the figures (bench/compare.ts reads it); a failed request is then
// counted, not fatal. PROBE_ENDPOINT=1 subscribes one endpoint to every event first, a receiver
// in this process that verifies each delivery (as the bench's events part does): the events
// relay's cost per request shows beside the other processes'.

type Kind = 'deposits' | 'withdrawals' | 'floor';
const kind = (process.env.PROBE_KIND ?? 'deposits') as Kind;
const rate = Number(process.env.PROBE_RATE ?? 10);
const n = Number(process.env.PROBE_N ?? 400);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const tag = randomBytes(3).toString('hex');
const jsonOut = process.env.PROBE_JSON;
const withEndpoint = process.env.PROBE_ENDPOINT === '1';

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

let failures = 0;

/** `count` requests at `rate` a second, open loop (a failure ends the probe unless PROBE_JSON counts it). */
async function offer(b: Bench, floor: FloorShape | undefined, count: number): Promise<Answer[]> {
  const t0 = Date.now();
  const all: Promise<Answer | undefined>[] = [];
  for (let i = 0; i < count; i++) {
    await sleep(Math.max(0, t0 + (i * 1000) / rate - Date.now()));
    const answer = one(b, floor);
    all.push(
      jsonOut
        ? answer.catch(() => {
            failures += 1;
            return undefined;
          })
        : answer,
    );
  }
  return (await Promise.all(all)).filter((a): a is Answer => a !== undefined);
}

/** The figures bench/compare.ts sets side by side: CPU per request of each process, and the answers. */
function writeJson(answers: Answer[], cpuMs: Record<string, number>, seconds: number) {
  const perRequest = Object.fromEntries(
    Object.entries(cpuMs).map(([part, ms]) => [part, round(ms / Math.max(1, answers.length), 2)]),
  );
  const figures = {
    kind,
    rate,
    n,
    answered: answers.length,
    failures,
    seconds: round(seconds, 1),
    answerMs: summarize(answers.map((a) => a.answered - a.sent)),
    cpuMsPerRequest: perRequest,
  };
  writeFileSync(jsonOut as string, JSON.stringify(figures, null, 2));
}

function printReport(answers: Answer[], split: Stages[], cpuShare: string[], threads: string[]) {
  console.log(`${n} ${kind === 'floor' ? 'floor update-with-start' : `POST /v1/${kind}`} at ${rate}/s`);
  for (const line of stageReport(answers, split)) console.log(line);
  console.log(`CPU, % of one core: ${cpuShare.join(', ')}`);
  for (const line of threads) console.log(line);
}

/** Each of the worker's and the API's threads' CPU so far: a thread at 100% bounds its process. */
function readThreads(b: Bench) {
  const pids = { worker: b.stack.workerPid, api: b.stack.pidsOf('api')[0] };
  return {
    pids,
    at: Date.now(),
    ticks: Object.entries(pids).map(([part, pid]) => ({ part, pid, t: threadTicks(pid ?? -1) })),
  };
}

/** The busiest threads of the worker and the API since `before`, one line each. */
function threadLines(before: ReturnType<typeof readThreads>): string[] {
  const seconds = (Date.now() - before.at) / 1000;
  return before.ticks.map(({ part, pid, t }) => {
    const top = busiestThreads(t, threadTicks(pid ?? -1), seconds, 4);
    return `${part}'s busiest threads, % of one core: ${top.map((x) => `${x.name}${x.tid === pid ? ' (main)' : ''} ${x.pct}%`).join(', ')}`;
  });
}

/** One endpoint subscribed to every event, its receiver here; its deliveries counted at the end. */
async function subscribe(b: Bench): Promise<Receiver> {
  const rx = await startReceiver();
  const r = await fetch(`${b.stack.api}/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${API_KEY}` },
    body: JSON.stringify({ url: rx.url, events: ['*'], description: 'probe receiver' }),
  });
  const body = (await r.json()) as { secret?: string };
  if (r.status !== 201 || !body.secret) throw new Error(`subscribing answered ${r.status}`);
  rx.secret = body.secret;
  return rx;
}

runOnFreshStack(async (b) => {
  const { stack } = b;
  await post(`${stack.sandbox}/sandbox/auto`, { payDepositsAfterMs: 100, settleWithdrawalsAfterMs: 100 });
  const rx = withEndpoint ? await subscribe(b) : undefined;
  const floor = kind === 'floor' ? (await readDepositShape(b)).shape : undefined;
  await offer(b, floor, 30); // warm-up, not counted
  const cpu0 = cpuSnapshot(stack.child.pid as number, b.ownPids);
  const threads0 = readThreads(b);
  const answers = await offer(b, floor, n);
  const threads = threadLines(threads0);
  // The last flows' payments and completions are theirs: counted before the window closes.
  if (jsonOut) await sleep(3_000);
  const cpu1 = cpuSnapshot(stack.child.pid as number, b.ownPids);
  if (rx) {
    console.log(`events delivered to the endpoint: ${rx.arrivals.size}, unverified: ${rx.unverified}`);
    await rx.close();
  }
  if (jsonOut) return writeJson(answers, cpuMsBetween(cpu0, cpu1), (cpu1.at - cpu0.at) / 1000);
  const marks = kind === 'deposits' ? await depositMarks(stack, answers) : new Map();
  const split = await Promise.all(answers.map((a) => stagesOf(b.client, a, marks)));
  const share = Object.entries(cpuPercentBetween(cpu0, cpu1)).map(
    ([part, pct]) => `${part} ${Math.round(pct)}%`,
  );
  printReport(answers, split, share, threads);
});
