import {
  allHandlersFinished,
  condition,
  defineSignal,
  defineUpdate,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
} from '@temporalio/workflow';

// The floor: a workflow shaped like a deposit (same number of activities, signals and one
// update answered after the first activity), every activity doing nothing. Run by the bench's
// own worker on task queue `bench-floor`. Also a bare signal sink for the signal-loop figure.

export interface FloorShape {
  /** Activities run through the server (a deposit: recordFlow ×2, inquireDeposit). */
  activities: number;
  /** Local activities (a deposit: createDepositQr, run inside the update's workflow task). */
  localActivities: number;
  /** Signals the flow waits for (a deposit: the provider's `requested` and `updated`). */
  signals: number;
}

export const floorSignal = defineSignal<[string]>('floorSignal');
export const floorUpdate = defineUpdate<string, []>('floorUpdate');

const { noop, done } = proxyActivities<{
  noop(): Promise<void>;
  done(workflowId: string): Promise<void>;
}>({ startToCloseTimeout: '30s' });
const local = proxyLocalActivities<{ noop(): Promise<void> }>({ startToCloseTimeout: '30s' });

export async function floorWorkflow(shape: FloorShape & { id: string }): Promise<void> {
  let signals = 0;
  let ready = false;
  setHandler(floorSignal, () => {
    signals += 1;
  });
  // Like the deposit's qrCode update: answered as soon as the first activity is done.
  setHandler(floorUpdate, async () => {
    await condition(() => ready);
    return 'ok';
  });
  // createDepositQr: local when the deposit runs it as a local activity.
  const firstIsLocal = shape.localActivities > 0;
  await (firstIsLocal ? local.noop() : noop());
  ready = true;
  for (let i = 1; i < shape.localActivities; i++) await local.noop();
  // recordFlow awaiting_payment, ...: every activity but the first (if not local) and the last two.
  for (let i = 0; i < shape.activities - 2 - (firstIsLocal ? 0 : 1); i++) await noop();
  await condition(() => signals >= shape.signals);
  await noop(); // inquireDeposit
  await done(shape.id); // recordFlow completed: the bench counts completion here
  await condition(allHandlersFinished);
}

/** Receives signals and does nothing else: the target of the bare signal loop. */
export async function sinkWorkflow(): Promise<void> {
  setHandler(floorSignal, () => {});
  await condition(() => false);
}
