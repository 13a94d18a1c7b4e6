import { WithStartWorkflowOperation } from '@temporalio/client';
import { type FloorShape, floorQuery, floorSignal, floorUpdate, type floorWorkflow } from '../floor-workflow';
import type { Bench } from '../harness';
import { type Completions, type Launched, ramp, step } from '../load';
import { FLOOR_QUEUE, runTag, say, settings, sleep } from '../settings';
import { type RampPoint, type Summary, saturationThroughput, summarize } from '../stats';

// The floor: what Temporal alone does on the same machine, with a workflow shaped like a flow
// whose activities do nothing, driven the way the API drives that flow.

let floorSeq = 0;

/** A floor workflow's id (its history is read by id). */
export const floorId = () => `floor-${runTag}-${++floorSeq}`;

/**
 * Starts a floor workflow the way the API starts its flow (update-with-start answered at the same
 * point, or a start and a query), then sends its signals from the client (none: it ends alone).
 * The latency is the answer's alone, as the API's caller waits for it. With `payAfterMs`, the last
 * signal (a deposit's payment) is sent that long after the answer, as a payer pays, and the
 * launch returns without waiting for it.
 */
export async function launchFloor(
  b: Bench,
  shape: FloorShape,
  signals = shape.signals,
  payAfterMs = 0,
): Promise<Launched> {
  const id = floorId();
  const args: [FloorShape & { id: string }] = [{ ...shape, signals, id }];
  const started = Date.now();
  if (shape.answer === 'update') {
    await b.client.workflow.executeUpdateWithStart(floorUpdate, {
      startWorkflowOperation: new WithStartWorkflowOperation<typeof floorWorkflow>('floorWorkflow', {
        workflowId: id,
        taskQueue: FLOOR_QUEUE,
        args,
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
  } else {
    const handle = await b.client.workflow.start<typeof floorWorkflow>('floorWorkflow', {
      workflowId: id,
      taskQueue: FLOOR_QUEUE,
      args,
    });
    await handle.query(floorQuery);
  }
  const latencyMs = Date.now() - started;
  const handle = b.client.workflow.getHandle(id);
  const send = async (from: number, to: number) => {
    for (let s = from; s < to; s++) await handle.signal(floorSignal, `n${s}`);
  };
  if (payAfterMs <= 0 || signals === 0) {
    await send(0, signals);
    return { id, ok: true, latencyMs };
  }
  await send(0, signals - 1);
  // A signal lost here leaves the flow incomplete, which its point counts against it.
  void sleep(payAfterMs)
    .then(() => send(signals - 1, signals))
    .catch(() => undefined);
  return { id, ok: true, latencyMs };
}

/** A floor workflow is done when its last activity has run. */
export const floorCompletions =
  (b: Bench): Completions =>
  async (ids) =>
    ids.map((id) => b.floorDone.get(id)).filter((t): t is number => t !== undefined);

export interface FloorRamp {
  shape: FloorShape;
  points: RampPoint[];
  saturation: number;
}

export async function floorRamp(b: Bench, shape: FloorShape, name = 'floor'): Promise<FloorRamp> {
  say(`${name} ramp...`);
  const points = await ramp(name, 4, () => launchFloor(b, shape), floorCompletions(b));
  return { shape, points, saturation: saturationThroughput(points) };
}

/**
 * What Temporal alone takes for the answer `POST /v1/deposits` waits for, at the same rate:
 * update-with-start of the floor workflow, answered after its first (local, no-op) activity, with
 * no HTTP, no API and no provider. The POST figure's distance from it is pixflow's own share.
 */
export async function bareUpdateWithStart(b: Bench, shape: FloorShape, rate: number): Promise<Summary> {
  say(`bare update-with-start at ${rate}/s...`);
  const r = await step(rate, settings.stepMs * 1.5, () => launchFloor(b, shape, 0), floorCompletions(b), {
    drainMs: 60_000,
  });
  const latency = summarize(r.latenciesMs);
  say(`   ${JSON.stringify(latency)}`);
  return latency;
}
