import type { Bench } from '../harness';
import { ramp } from '../load';
import { completedFlows, onboardSomeone } from '../pixflow';
import { say } from '../settings';
import { type RampPoint, saturationThroughput } from '../stats';
import { type FloorRamp, floorRamp } from './floor';
import { type FlowShape, readOnboardingShape } from './shape';

// Onboardings end to end: POST /v1/onboardings → KYC → the liveness link → the person finishes
// the liveness (the sandbox's control endpoint, for a CPF it approves without a manual review) →
// its callbacks → `approved`. In a ramp, next to a floor shaped like an onboarding.

export interface Onboarding {
  flowShape: FlowShape;
  floor: FloorRamp;
  points: RampPoint[];
  saturation: number;
}

export async function onboardings(b: Bench): Promise<Onboarding> {
  const { shape, flowShape } = await readOnboardingShape(b);
  const floor = await floorRamp(b, shape, 'onboarding floor');
  say('onboardings ramp...');
  const points = await ramp('onboardings', 2, () => onboardSomeone(b), completedFlows(b, 'onboarding'));
  return { flowShape, floor, points, saturation: saturationThroughput(points) };
}
