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

// Starting a person's biometric identification, from outside its flow: the API (a liveness link
// for an approved person) and a withdrawal's step-up activity both attach to the open run of the
// biometrics flow or start the next one.

/** What a biometric identification asks the provider with: no caller chooses them. */
const BIOMETRICS_PLAN = 'plan_basic';
const BIOMETRICS_EVENT = 'biometric_identification';

/** The provider gave the run no link (it would not for a new run either). */
export class BiometricsUnavailableError extends Error {
  override name = 'BiometricsUnavailableError';
}

/**
 * Why the person gets no identification and what would give them one, as the API's 409 and a
 * step-up's refusal say it: the run's reason code alone (not_onboarded_at_provider) leaves a
 * caller, whose own records say the person is approved, with nothing to act on.
 */
function unavailableDetail(cpf: string, reason: string | undefined): string {
  const who = maskCpf(cpf);
  if (reason === 'not_onboarded_at_provider')
    return (
      `The provider does not count ${who} as onboarded, so it gives no biometric identification ` +
      '(it answered a new onboarding link): its own liveness review of their onboarding has not ' +
      "approved them, it is still manual_approve_pending whatever pixflow's review decided. Ask " +
      "again once the provider's reviewer has approved it (against the sandbox: POST " +
      '/sandbox/liveness/review {"document": "<cpf>", "decision": "approve"}). Reason: not_onboarded_at_provider.'
    );
  if (reason?.startsWith('liveness_'))
    return `The provider refused a biometric identification for ${who}. Reason: ${reason}.`;
  return `No biometric identification for ${who}${reason ? `. Reason: ${reason}` : ''}.`;
}

/** The reason code in an ended run's refusal: "biometric identification is unavailable: <reason>". */
const reasonOf = (message: string) => /^biometric identification is \w+: (\S+)$/.exec(message)?.[1];

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
      if (ended && cause.details?.[0] === 'unavailable')
        throw new BiometricsUnavailableError(unavailableDetail(opts.cpf, reasonOf(cause.message)));
      if (attempt >= 20) throw new BiometricsUnavailableError(cause?.message ?? err.message);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}
