import { WithStartWorkflowOperation } from '@temporalio/client';
import { type FloorShape, floorSignal, floorUpdate, type floorWorkflow } from '../floor-workflow';
import type { Bench } from '../harness';
import { type Completions, type Launched, ramp, step } from '../load';
import { FLOOR_QUEUE, runTag, say, settings } from '../settings';
import { type RampPoint, type Summary, saturationThroughput, summarize } from '../stats';

// The floor: what Temporal alone does on the same machine, with a workflow shaped like a deposit
// whose activities do nothing, driven the way the API drives a deposit.

let floorSeq = 0;

/** Update-with-start of a floor workflow, then its signals from the client (none: it ends alone). */
async function launchFloor(b: Bench, shape: FloorShape, signals = shape.signals): Promise<Launched> {
  const id = `floor-${runTag}-${++floorSeq}`;
  await b.client.workflow.executeUpdateWithStart(floorUpdate, {
    startWorkflowOperation: new WithStartWorkflowOperation<typeof floorWorkflow>('floorWorkflow', {
      workflowId: id,
      taskQueue: FLOOR_QUEUE,
      args: [{ ...shape, signals, id }],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  const handle = b.client.workflow.getHandle(id);
  for (let s = 0; s < signals; s++) await handle.signal(floorSignal, `n${s}`);
  return { id, ok: true };
}

/** A floor workflow is done when its last activity has run. */
const floorCompletions =
  (b: Bench): Completions =>
  async (ids) =>
    ids.map((id) => b.floorDone.get(id)).filter((t): t is number => t !== undefined);

export interface FloorRamp {
  shape: FloorShape;
  points: RampPoint[];
  saturation: number;
}

export async function floorRamp(b: Bench, shape: FloorShape): Promise<FloorRamp> {
  say('1. floor ramp...');
  const points = await ramp('floor', 4, () => launchFloor(b, shape), floorCompletions(b));
  return { shape, points, saturation: saturationThroughput(points) };
}

/**
 * What Temporal alone takes for the answer `POST /v1/deposits` waits for, at the same rate:
 * update-with-start of the floor workflow, answered after its first (local, no-op) activity, with
 * no HTTP, no API and no provider. The POST figure's distance from it is pixflow's own share.
 */
export async function bareUpdateWithStart(b: Bench, shape: FloorShape, rate: number): Promise<Summary> {
  say(`   bare update-with-start at the same rate...`);
  const r = await step(
    rate,
    settings.stepMs * 1.5,
    () => launchFloor(b, shape, 0),
    floorCompletions(b),
    60_000,
  );
  const latency = summarize(r.latenciesMs);
  say(`   ${JSON.stringify(latency)}`);
  return latency;
}
