import { defineQuery } from '@temporalio/workflow';
import { z } from 'zod';

// The rescreening's contract: a Temporal Schedule starts one pass at a time over the customers
// active in the last ELIGIBILITY_RESCREEN_ACTIVE_DAYS days, each asked about again in the
// registry of impeded people (docs/rules.md, Eligibility). A pass goes in keyset batches by
// cpf_hash and continues as new every BATCHES_PER_RUN batches, carrying its cursor and counts.

/** One Schedule per task queue, like the reconciler: another deployment's workers keep theirs. */
export const rescreeningScheduleId = (taskQueue: string) => `rescreening-${taskQueue}`;

/** People one activity screens before the workflow records the cursor. */
export const RESCREEN_BATCH_SIZE = 100;
/** Batches in one run before it continues as new, keeping its history short. */
export const BATCHES_PER_RUN = 20;

export const rescreeningCountsSchema = z.object({
  /** People handled: asked, or answered from a fresh answer. */
  screened: z.number().int().min(0),
  /** Found impeded (recorded with a `customer.impeded` event when new). */
  impeded: z.number().int().min(0),
  /** The registry gave no answer: asked again on the next pass. */
  unavailable: z.number().int().min(0),
  /** No sealed CPF on file (screened before CPFs were kept): asked at their next deposit. */
  noCpf: z.number().int().min(0),
});
export type RescreeningCounts = z.infer<typeof rescreeningCountsSchema>;

export const rescreeningProgressSchema = rescreeningCountsSchema.extend({
  /** The last cpf_hash handled: the next batch starts after it. */
  cursor: z.string().nullable(),
  done: z.boolean(),
});
export type RescreeningProgress = z.infer<typeof rescreeningProgressSchema>;

export const rescreeningInputSchema = z.object({
  /** When the pass began (ISO): "active" is measured back from it on every run of the pass. */
  startedAt: z.iso.datetime().optional(),
  progress: rescreeningProgressSchema.optional(),
  /** People a batch; unset: RESCREEN_BATCH_SIZE. */
  batchSize: z.number().int().positive().optional(),
});
export type RescreeningInput = z.infer<typeof rescreeningInputSchema>;

export const zeroRescreeningProgress = (): RescreeningProgress => ({
  screened: 0,
  impeded: 0,
  unavailable: 0,
  noCpf: 0,
  cursor: null,
  done: false,
});

export const rescreeningProgressQuery = defineQuery<RescreeningProgress>('rescreeningProgress');
