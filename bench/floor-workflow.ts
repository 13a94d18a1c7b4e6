import {
  allHandlersFinished,
  condition,
  defineQuery,
  defineSignal,
  defineUpdate,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';

// The floor: a workflow shaped like a real flow (its activities in the same order, each local or
// through the server as the flow runs it, its signals awaited at the same points, and its caller
// answered at the same point: a deposit's update once its QR exists, or a query right after the
// start, as the API answers a new onboarding), every activity doing nothing. Run by the bench's
// own worker on task queue `bench-floor`. Also a bare signal sink for the signal-loop figure.

export type ActivityKind = 'local' | 'remote';

export interface FloorShape {
  /** The deposit's activities in history order: `local` (a marker) or `remote` (scheduled). */
  activities: ActivityKind[];
  /** For each activity, how many signals the deposit had received before it ran. */
  signalsBefore: number[];
  /** Signals the flow waits for (a deposit: the provider's `requested` and `updated`). */
  signals: number;
  /** How the caller is answered: an update (with start), or a query after the start. */
  answer: 'update' | 'query';
  /** Activities done before the update's answer (a deposit: 1, its QR). */
  answerAfter: number;
}

export const floorSignal = defineSignal<[string]>('floorSignal');
export const floorUpdate = defineUpdate<string, []>('floorUpdate');
export const floorQuery = defineQuery<number>('floorQuery');

interface Noops {
  noop(): Promise<void>;
  /** The last activity (the deposit's recordFlow `completed`): the bench counts completion here. */
  done(workflowId: string): Promise<void>;
}
const remote = proxyActivities<Noops>({ startToCloseTimeout: '30s' });
const local = proxyLocalActivities<Noops>({ startToCloseTimeout: '30s' });

export async function floorWorkflow(shape: FloorShape & { id: string }): Promise<void> {
  let signals = 0;
  let done = 0;
  setHandler(floorSignal, () => {
    signals += 1;
  });
  // Like the deposit's qrCode update: answered as soon as its activities before the answer are done.
  setHandler(floorUpdate, async () => {
    await condition(() => done >= shape.answerAfter);
    return 'ok';
  });
  setHandler(floorQuery, () => done);
  const last = shape.activities.length - 1;
  for (const [i, kind] of shape.activities.entries()) {
    const needed = Math.min(shape.signalsBefore[i] ?? 0, shape.signals);
    await condition(() => signals >= needed);
    const acts = kind === 'local' ? local : remote;
    await (i === last ? acts.done(shape.id) : acts.noop());
    done += 1;
  }
  await condition(() => signals >= shape.signals && allHandlersFinished());
}

/** Receives signals and does nothing else: the target of the bare signal loop. */
export async function sinkWorkflow(): Promise<void> {
  setHandler(floorSignal, () => {});
  await condition(() => false);
}
