import type { Bench } from '../harness';
import { postWithdrawal } from '../pixflow';
import { say } from '../settings';
import { round } from '../stats';
import { type FloorRamp, floorRamp } from './floor';
import { type Latency, latencyStep } from './latency';
import { type FlowShape, readWithdrawalShape } from './shape';

// Withdrawals end to end, with receipts: POST /v1/withdrawals → the sandbox settles the payout →
// its notification → outcome → receipt stored → `completed`. A floor shaped like a withdrawal is
// ramped next to the deposit-shaped one (a payout has more activities and events than a deposit,
// so the deposit-shaped floor would measure the flow's shape as pixflow's cost); the withdrawals'
// own ramps are in the saturation rounds (saturation.ts); then their latency at half of the
// rounds' median saturation.

export interface WithdrawalFloor {
  flowShape: FlowShape;
  floor: FloorRamp;
}

export interface Withdrawals extends WithdrawalFloor {
  /** The withdrawals' median saturation over the rounds (saturation.ts). */
  saturation: number;
  latency: Latency;
}

export async function withdrawalFloor(b: Bench): Promise<WithdrawalFloor> {
  const { shape, flowShape } = await readWithdrawalShape(b);
  return { flowShape, floor: await floorRamp(b, shape, 'withdrawal floor') };
}

export async function withdrawalLatency(
  b: Bench,
  floor: WithdrawalFloor,
  saturation: number,
): Promise<Withdrawals> {
  say(`withdrawal latency at half of saturation (${round(saturation / 2)}/s)...`);
  const latency = await latencyStep(b, Math.max(0.5, saturation / 2), () => postWithdrawal(b), 'withdrawal');
  say(`   ${JSON.stringify(latency)}`);
  return { ...floor, saturation, latency };
}
