import { generate as generateCpf } from '@fnando/cpf';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, expect, it } from 'vitest';
import { createFlowActivities } from '../../activities/flows';
import { cpfHash } from '../../common/pii';
import type { FlowRecord } from '../../contracts/flow';
import { testPool } from '../helpers/postgres';

// The flows row of a workflow id that starts again: the new run counts its sequence from 1.

const pool = testPool();
afterAll(() => pool.end());
const KEY = 'flows-run-test-key-0123456789';
const { recordFlow } = createFlowActivities({
  pool,
  hashCpf: (c) => cpfHash(c, KEY),
  clock: () => new Date(),
});

/** recordFlow as the local activity of one run calls it. */
const writeAs = (runId: string, r: FlowRecord) =>
  new MockActivityEnvironment({ workflowExecution: { workflowId: r.workflowId, runId } }).run(recordFlow, r);

const rowOf = async (workflowId: string) =>
  (await pool.query('SELECT status, seq, run_id FROM flows WHERE workflow_id = $1', [workflowId])).rows[0];

it('a new run of the same workflow id moves its row from seq 1, and a late write of a run never moves it back', async () => {
  const cpf = generateCpf();
  const workflowId = `onboarding-${cpfHash(cpf, KEY)}`;
  const at = (status: string, seq: number): FlowRecord => ({
    workflowId,
    type: 'onboarding',
    businessId: cpf,
    cpf,
    status,
    seq,
  });
  await writeAs('run-1', at('kyc', 1));
  await writeAs('run-1', at('awaiting_liveness', 2));
  await writeAs('run-1', at('expired', 3));
  await writeAs('run-1', at('awaiting_liveness', 2)); // a late retry
  expect(await rowOf(workflowId)).toMatchObject({ status: 'expired', seq: 3, run_id: 'run-1' });

  // Started again after it expired: the new run's first writes count.
  await writeAs('run-2', at('kyc', 1));
  expect(await rowOf(workflowId)).toMatchObject({ status: 'kyc', seq: 1, run_id: 'run-2' });
  await writeAs('run-2', at('awaiting_liveness', 2));
  await writeAs('run-2', at('kyc', 1)); // a late retry of the new run
  expect(await rowOf(workflowId)).toMatchObject({ status: 'awaiting_liveness', seq: 2, run_id: 'run-2' });
});
