import type { Bench } from '../harness';
import { ramp } from '../load';
import { completedFlows, postDeposit } from '../pixflow';
import { say } from '../settings';
import { type RampPoint, round, saturationThroughput } from '../stats';
import { type Latency, latencyStep } from './latency';

// Deposits end to end: POST /v1/deposits → the sandbox pays the QR → its notification → the
// ingress → signal → inquiry → `completed`.

export interface DepositRamp {
  points: RampPoint[];
  saturation: number;
}

export async function depositRamp(b: Bench): Promise<DepositRamp> {
  say('2. deposits ramp...');
  const points = await ramp('deposits', 2, () => postDeposit(b), completedFlows(b, 'deposit'));
  return { points, saturation: saturationThroughput(points) };
}

/** POST and payment → completed latency at half of the deposits' saturation. */
export async function depositLatency(b: Bench, saturation: number): Promise<Latency> {
  say(`3. deposit latency at half of saturation (${round(saturation / 2)}/s)...`);
  const latency = await latencyStep(b, Math.max(0.5, saturation / 2), () => postDeposit(b), 'deposit');
  say(`   ${JSON.stringify(latency)}`);
  return latency;
}
