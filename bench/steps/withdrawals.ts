import type { Bench } from '../harness';
import { ramp } from '../load';
import { completedFlows, postWithdrawal } from '../pixflow';
import { say } from '../settings';
import { type RampPoint, round, saturationThroughput } from '../stats';
import { type FloorRamp, floorRamp } from './floor';
import { type Latency, latencyStep } from './latency';
import { type FlowShape, readWithdrawalShape } from './shape';

// Withdrawals end to end, with receipts: POST /v1/withdrawals → the sandbox settles the payout →
// its notification → outcome → receipt stored → `completed`. Its ramp next to a floor shaped like
// a withdrawal (a payout has more activities and events than a deposit, so the deposit-shaped
// floor would measure the flow's shape as pixflow's cost), then its latency at half of saturation.

export interface Withdrawals {
  flowShape: FlowShape;
  floor: FloorRamp;
  points: RampPoint[];
  saturation: number;
  latency: Latency;
}

export async function withdrawals(b: Bench): Promise<Withdrawals> {
  const { shape, flowShape } = await readWithdrawalShape(b);
  const floor = await floorRamp(b, shape, 'withdrawal floor');
  say('withdrawals ramp...');
  const points = await ramp('withdrawals', 2, () => postWithdrawal(b), completedFlows(b, 'withdrawal'));
  const saturation = saturationThroughput(points);
  say(`   withdrawal latency at half of saturation (${round(saturation / 2)}/s)...`);
  const latency = await latencyStep(b, Math.max(0.5, saturation / 2), () => postWithdrawal(b), 'withdrawal');
  say(`   ${JSON.stringify(latency)}`);
  return { flowShape, floor, points, saturation, latency };
}
