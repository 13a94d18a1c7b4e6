import type { Bench } from '../harness';
import { ramp } from '../load';
import { completedFlows, postDeposit } from '../pixflow';
import { say } from '../settings';
import { type RampPoint, saturationThroughput } from '../stats';

// Deposits end to end: POST /v1/deposits → the sandbox pays the QR → its notification → the
// ingress → signal → inquiry → `completed`, in a ramp up to saturation.

export interface DepositRamp {
  points: RampPoint[];
  saturation: number;
}

export async function depositRamp(b: Bench): Promise<DepositRamp> {
  say('deposits ramp...');
  const points = await ramp('deposits', 2, () => postDeposit(b), completedFlows(b, 'deposit'));
  return { points, saturation: saturationThroughput(points) };
}
