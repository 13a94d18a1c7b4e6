import {
  allHandlersFinished,
  condition,
  defineSignal,
  defineUpdate,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';

// The floor: a workflow shaped like a deposit (same number of activities, signals and one
// update answered after the first activity), every activity doing nothing. Run by the bench's
// own worker on task queue `bench-floor`. Also a bare signal sink for the signal-loop figure.

export interface FloorShape {
  /** Activities in all (a deposit: createDepositQr, recordFlow ×3, inquireDeposit). */
  activities: number;
  /** Signals the flow waits for (a deposit: the provider's `requested` and `updated`). */
  signals: number;
}

export const floorSignal = defineSignal<[string]>('floorSignal');
export const floorUpdate = defineUpdate<string, []>('floorUpdate');

const { noop, done } = proxyActivities<{
  noop(): Promise<void>;
  done(workflowId: string): Promise<void>;
}>({ startToCloseTimeout: '30s' });

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
  await noop(); // createDepositQr
  ready = true;
  // recordFlow creating, recordFlow awaiting_payment, ...: all but the first and the last two.
  for (let i = 0; i < shape.activities - 3; i++) await noop();
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
