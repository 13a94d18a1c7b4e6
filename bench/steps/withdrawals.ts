import type { Bench } from '../harness';
import { ramp } from '../load';
import { completedFlows, postWithdrawal } from '../pixflow';
import { say } from '../settings';
import { type RampPoint, round, saturationThroughput } from '../stats';
import { type Latency, latencyStep } from './latency';

// Withdrawals end to end, with receipts: POST /v1/withdrawals → the sandbox settles the payout →
// its notification → outcome → receipt stored → `completed`. Its ramp, then its latency at half
// of saturation.

export interface Withdrawals {
  points: RampPoint[];
  saturation: number;
  latency: Latency;
}

export async function withdrawals(b: Bench): Promise<Withdrawals> {
  say('withdrawals ramp...');
  const points = await ramp('withdrawals', 2, () => postWithdrawal(b), completedFlows(b, 'withdrawal'));
  const saturation = saturationThroughput(points);
  say(`   withdrawal latency at half of saturation (${round(saturation / 2)}/s)...`);
  const latency = await latencyStep(b, Math.max(0.5, saturation / 2), () => postWithdrawal(b), 'withdrawal');
  say(`   ${JSON.stringify(latency)}`);
  return { points, saturation, latency };
}
