import { type Client, WithStartWorkflowOperation, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure, type UpdateDefinition } from '@temporalio/common';
import { escapeMarkdown } from '../common/markdown';
import { maskCpf } from '../common/mask';
import { startSearchAttributes } from '../common/search-attributes';
import {
  BIOMETRICS_FINISHED,
  type BiometricsInput,
  biometricsWorkflowId,
  type LivenessLinkAnswer,
} from '../contracts/biometrics';
import type { FlowTimings } from '../contracts/flow';

// Asking for a person's biometric identification, from outside its flow: the API (a liveness
// link for an approved person) and a withdrawal's step-up both attach to the open run of the
// biometrics flow or start the next one. Not an activity itself: the step-up activity calls it.

/** What a biometric identification asks the provider with: no caller chooses them. */
const BIOMETRICS_PLAN = 'plan_basic';
const BIOMETRICS_EVENT = 'biometric_identification';

/** The provider gave the run no link (it would not for a new run either). */
export class BiometricsUnavailableError extends Error {
  override name = 'BiometricsUnavailableError';
}

/**
 * Update-with-start on `biometrics-<hash>`: attaches to the open identification or starts a new
 * run. A run that has just ended refuses the ask until it is closed: then the next one starts.
 */
export async function askBiometrics<Args extends unknown[]>(
  client: Client,
  opts: {
    cpf: string;
    cpfHash: string;
    taskQueue: string;
    timings?: Partial<FlowTimings>;
    update: UpdateDefinition<LivenessLinkAnswer, Args>;
    args: Args;
  },
): Promise<LivenessLinkAnswer & { workflowId: string }> {
  const workflowId = biometricsWorkflowId(opts.cpfHash);
  const input: BiometricsInput = {
    cpf: opts.cpf,
    plan: BIOMETRICS_PLAN,
    event: BIOMETRICS_EVENT,
    ...(opts.timings ? { timings: opts.timings } : {}),
  };
  for (let attempt = 0; ; attempt++) {
    try {
      const answer = await client.workflow.executeUpdateWithStart(opts.update, {
        args: opts.args,
        startWorkflowOperation: new WithStartWorkflowOperation('biometricsWorkflow', {
          workflowId,
          taskQueue: opts.taskQueue,
          args: [input],
          workflowIdConflictPolicy: 'USE_EXISTING',
          // Each identification is a run of its own: a closed one is followed by a new one.
          workflowIdReusePolicy: 'ALLOW_DUPLICATE',
          staticSummary: escapeMarkdown(`Biometric identification ${maskCpf(opts.cpf)}`),
          typedSearchAttributes: startSearchAttributes({
            type: 'biometrics',
            status: 'issuing_link',
            cpfHash: opts.cpfHash,
            cpfMasked: maskCpf(opts.cpf),
          }),
        }),
      });
      return { ...answer, workflowId };
    } catch (err) {
      if (!(err instanceof WorkflowUpdateFailedError)) throw err;
      const cause = err.cause;
      const ended = cause instanceof ApplicationFailure && cause.type === BIOMETRICS_FINISHED;
      if (ended && cause.details?.[0] === 'unavailable') throw new BiometricsUnavailableError(cause.message);
      if (attempt >= 20) throw new BiometricsUnavailableError(cause?.message ?? err.message);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
