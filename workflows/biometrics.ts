import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  proxyActivities,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createBiometricsActivities } from '../activities/biometrics';
import {
  BIOMETRICS_FINISHED,
  type BiometricProgress,
  type BiometricsInput,
  type BiometricsState,
  type BiometricsStatus,
  biometricLinkUpdate,
  biometricProgressSignal,
  biometricsFinalStatuses,
  biometricsStateQuery,
  NOT_BIOMETRIC_IDENTIFICATION,
} from '../contracts/biometrics';
import { resolveTimings } from '../contracts/shared';
import { isoNow, PROVIDER_RETRY, trackFlow } from './flow-lifecycle';
import { livenessStageOf } from './liveness-progress';

type BiometricsActivities = ReturnType<typeof createBiometricsActivities>;
const { requestBiometricLink } = proxyActivities<BiometricsActivities>({
  startToCloseTimeout: '30s',
  retry: PROVIDER_RETRY,
  summary: 'Ask the provider for a biometric identification link',
});
const { recordBiometricOutcome } = proxyActivities<BiometricsActivities>({
  startToCloseTimeout: '10s',
  retry: { initialInterval: '500ms', maximumInterval: '10s' },
  summary: 'Record the identification in Postgres',
});

/** Liveness states that decide an identification; every other one is progress. */
const OUTCOME: Record<string, 'passed' | 'failed'> = {
  completed: 'passed',
  manual_approved: 'passed',
  failed: 'failed',
  manual_refused: 'failed',
};

/**
 * Biometric identification of an approved person: one link from the provider, handed out again
 * to every ask while the flow runs, then the outcome its callbacks announce. The link is valid
 * for `livenessLinkTtlMs` (30 minutes) or until the person finishes, so the flow ends with it:
 * `passed`, `failed`, or `expired` when no outcome came in time. The next ask starts a new run.
 */
export async function biometricsWorkflow(input: BiometricsInput): Promise<BiometricsState> {
  const timings = resolveTimings(input.timings);
  const state: BiometricsState = { status: 'issuing_link', startedAt: isoNow(), updatedAt: isoNow() };
  const { workflowId, runId } = workflowInfo();
  const flow = trackFlow({
    record: { type: 'biometrics', businessId: input.cpf, cpf: input.cpf },
    state,
    finalStatuses: biometricsFinalStatuses,
    // A new run reuses the workflow id: its flows row names the run (activities/flows.ts).
    details: () => ({ runId, livenessStatus: state.livenessStatus, linkIssuedAt: state.link?.issuedAt }),
  });
  setHandler(biometricsStateQuery, () => state);

  serveLink(state, flow.isFinal);

  const correlationId = uuid4();
  let transactionId: string | undefined;
  let outcome: 'passed' | 'failed' | undefined;
  setHandler(biometricProgressSignal, (p: BiometricProgress) => {
    // Only this run's link counts: the provider's callbacks name the request they answer.
    const ours = p.correlationId === correlationId || (transactionId && p.transactionId === transactionId);
    if (flow.isFinal() || !ours || p.actionType !== 'biometric_identification') return;
    // A late earlier stage (callbacks can arrive out of order) never hides the outcome.
    if (livenessStageOf(p.statusVerification) >= livenessStageOf(state.livenessStatus)) {
      state.livenessStatus = p.statusVerification;
    }
    state.updatedAt = isoNow();
    outcome ??= OUTCOME[p.statusVerification];
  });

  const end = async (
    status: Exclude<BiometricsStatus, 'issuing_link' | 'awaiting_identification'>,
    reason?: string,
  ) => {
    await recordBiometricOutcome({
      workflowId,
      runId,
      cpf: input.cpf,
      linkIssuedAt: state.link?.issuedAt,
      outcome: status,
      reason,
      finishedAt: isoNow(),
    });
    return flow.finish(status, reason);
  };

  // Taken before the call: the provider's 30 minutes start no earlier than this.
  const issuedAt = Date.now();
  try {
    const issued = await requestBiometricLink({
      workflowId,
      runId,
      cpf: input.cpf,
      plan: input.plan,
      event: input.event,
      correlationId,
      issuedAt: new Date(issuedAt).toISOString(),
    });
    transactionId = issued.transactionId;
    state.link = {
      url: issued.url,
      qrcode: issued.qrcode,
      type: issued.type,
      issuedAt: new Date(issuedAt).toISOString(),
      expiresAt: new Date(issuedAt + timings.livenessLinkTtlMs).toISOString(),
    };
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable) {
      const type = err.cause.type ?? 'refused';
      return end(
        'unavailable',
        type === NOT_BIOMETRIC_IDENTIFICATION
          ? 'not_onboarded_at_provider'
          : `liveness_${type.toLowerCase()}`,
      );
    }
    throw err;
  }
  await flow.moveTo('awaiting_identification');

  const left = new Date(state.link.expiresAt).getTime() - Date.now();
  const decided = await condition(() => outcome !== undefined, Math.max(left, 1), {
    summary: 'Biometric identification outcome, until the link expires',
  });
  if (!decided || !outcome) return end('expired', 'no_outcome_before_link_expiry');
  return end(outcome, outcome === 'failed' ? `liveness_${state.livenessStatus}` : undefined);
}

/** Hands the run's link to every ask; `reused` once an earlier ask was given it. */
function serveLink(state: BiometricsState, isFinal: () => boolean) {
  // Whether an ask was already answered with the link: only state, no command depends on it.
  let handedOut = false;
  setHandler(
    biometricLinkUpdate,
    async () => {
      // Asked at start (update-with-start): the answer waits for the provider's link.
      await condition(() => state.link !== undefined || isFinal());
      if (isFinal() || !state.link) {
        throw ApplicationFailure.create({
          message: `biometric identification is ${state.status}${state.reason ? `: ${state.reason}` : ''}`,
          type: BIOMETRICS_FINISHED,
          nonRetryable: true,
          details: [state.status],
        });
      }
      const reused = handedOut;
      handedOut = true;
      return { link: state.link, reused };
    },
    {
      validator: () => {
        if (isFinal()) throw new Error(`biometric identification is already ${state.status}`);
      },
    },
  );
}
