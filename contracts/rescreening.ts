import { defineQuery } from '@temporalio/workflow';

// The rescreening's contract: a Temporal Schedule starts one pass at a time over the customers
// active in the last `eligibility.rescreenActiveDays` days (the rules policy), each asked about
// again in the registry of impeded people (docs/rules.md, Eligibility). A pass goes in keyset
// batches by cpf_hash and continues as new every BATCHES_PER_RUN batches, carrying its cursor and
// counts.

/** One Schedule per task queue, like the reconciler: another deployment's workers keep theirs. */
export const rescreeningScheduleId = (taskQueue: string) => `rescreening-${taskQueue}`;

/** People one activity screens before the workflow records the cursor. */
export const RESCREEN_BATCH_SIZE = 100;
/** Batches in one run before it continues as new, keeping its history short. */
export const BATCHES_PER_RUN = 20;

// Plain types: the workflow bundle loads this file and carries no zod (test/workflows/bundle.test.ts);
// the pass's input comes from its own Schedule and its own continue-as-new, never from a caller.

export interface RescreeningCounts {
  /** People handled: asked, or answered from a fresh answer. */
  screened: number;
  /** Found impeded (recorded with a `customer.impeded` event when new). */
  impeded: number;
  /** The registry gave no answer: asked again on the next pass. */
  unavailable: number;
  /** No sealed CPF on file (screened before CPFs were kept): asked at their next onboarding or deposit. */
  noCpf: number;
}

export interface RescreeningProgress extends RescreeningCounts {
  /** The last cpf_hash handled: the next batch starts after it. */
  cursor: string | null;
  done: boolean;
}

export interface RescreeningInput {
  /** When the pass began (ISO): "active" is measured back from it on every run of the pass. */
  startedAt?: string;
  progress?: RescreeningProgress;
  /** People a batch; unset: RESCREEN_BATCH_SIZE. */
  batchSize?: number;
}

export const zeroRescreeningProgress = (): RescreeningProgress => ({
  screened: 0,
  impeded: 0,
  unavailable: 0,
  noCpf: 0,
  cursor: null,
  done: false,
});

export const rescreeningProgressQuery = defineQuery<RescreeningProgress>('rescreeningProgress');
