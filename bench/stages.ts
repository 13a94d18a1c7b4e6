import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import pg from 'pg';
import { depositWorkflowId } from '../contracts/deposit';
import type { SandboxState } from './pixflow';
import type { BenchStack } from './stack';
import { percentile, round } from './stats';

// One answer's time, split into stages read from its flow's history (and, for a deposit, from
// the provider's and the flows table's clocks):
//   api → started   request sent → WorkflowExecutionStarted (the API, the server's start)
//   dispatch        first workflow task scheduled → started (the server hands it to a poller)
//   first task      its start → completion (the worker; a deposit's QR local activity is in it),
//                   for a deposit split where the provider received the charge (the sandbox's
//                   createdAt) and where its flows row was written (the event's created_at):
//     → provider      the SDK runs the new workflow until it asks for the activity, which calls
//     → row           the provider's answer, and the transaction that writes the row begins
//     → task done     the row, the activity's result back to the workflow, the task's completion
//   → answer        its completion → the answer received (the update's result back through the API)

type Event = temporal.api.history.v1.IHistoryEvent;
const at = (e: Event | undefined) =>
  e?.eventTime ? Number(e.eventTime.seconds) * 1000 + Number(e.eventTime.nanos) / 1e6 : Number.NaN;

export interface Answer {
  workflowId: string;
  sent: number;
  answered: number;
}

/** A deposit's first-task marks, by workflow id: provider received it, its flows row written (ms). */
export type Marks = Map<string, { atProvider: number; rowWritten: number }>;

export async function depositMarks(stack: BenchStack, answers: Answer[]): Promise<Marks> {
  const marks: Marks = new Map();
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

export type Stages = Record<string, number>;

/** One answer's stages, read from its flow's history. */
export async function stagesOf(client: Client, a: Answer, marks: Marks): Promise<Stages> {
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

/** Lines of p50 / p90 / p99 (ms) of the answers and of each stage. */
export function stageReport(answers: Answer[], split: Stages[]): string[] {
  const row = (name: string, v: number[]) =>
    `${name.padEnd(16)} p50 ${round(percentile(v, 50), 0)}  p90 ${round(percentile(v, 90), 0)}  p99 ${round(percentile(v, 99), 0)} ms`;
  const lines = [
    row(
      'answer',
      answers.map((a) => a.answered - a.sent),
    ),
  ];
  for (const name of Object.keys(split[0] ?? {})) {
    const values = split.map((x) => x[name]).filter((v): v is number => v !== undefined);
    lines.push(row(name, values));
  }
  return lines;
}
