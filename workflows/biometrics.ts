import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  getExternalWorkflowHandle,
  proxyActivities,
  setHandler,
  setWorkflowOptions,
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
  biometricStepUpUpdate,
  biometricsFinalStatuses,
  biometricsOutcomeSignal,
  biometricsStateQuery,
  NOT_BIOMETRIC_IDENTIFICATION,
  type StepUpAsk,
} from '../contracts/biometrics';
import { type FlowTimings, resolveTimings } from '../contracts/flow';
import { FlowTracker, isoNow, POSTGRES_WRITE_OPTIONS, PROVIDER_CALL_OPTIONS } from './flow-lifecycle';
import { keptLink } from './liveness-link';
import { livenessStageOf } from './liveness-progress';

type BiometricsActivities = ReturnType<typeof createBiometricsActivities>;
const { requestBiometricLink } = proxyActivities<BiometricsActivities>({
  ...PROVIDER_CALL_OPTIONS,
  summary: 'Ask the provider for a biometric identification link',
});
const { recordBiometricOutcome } = proxyActivities<BiometricsActivities>({
  ...POSTGRES_WRITE_OPTIONS,
  summary: 'Record the identification in Postgres',
});

/** Liveness states that decide an identification; every other one is progress. */
const OUTCOME: Record<string, 'passed' | 'failed'> = {
  completed: 'passed',
  manual_approved: 'passed',
  failed: 'failed',
  manual_refused: 'failed',
};

/** A biometric identification's status changes. */
class BiometricsFlow extends FlowTracker<BiometricsStatus, BiometricsState> {
  constructor(input: BiometricsInput, state: BiometricsState) {
    super({ type: 'biometrics', businessId: input.cpf, cpf: input.cpf }, state, biometricsFinalStatuses);
  }

  protected override details() {
    // A new run reuses the workflow id: its flows row names the run (activities/flows.ts).
    const { livenessStatus, link } = this.state;
    return { runId: workflowInfo().runId, livenessStatus, linkIssuedAt: link?.issuedAt };
  }
}

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
  const flow = new BiometricsFlow(input, state);
  setHandler(biometricsStateQuery, () => state);

  const correlation = { id: uuid4() };
  let transactionId: string | undefined;
  let outcome: 'passed' | 'failed' | undefined;
  const links = serveLinks(state, () => flow.isFinal() || outcome !== undefined);
  setHandler(biometricProgressSignal, (p: BiometricProgress) => {
    // Only this run's current link counts: the provider's callbacks name the request they answer.
    const ours = p.correlationId === correlation.id || (transactionId && p.transactionId === transactionId);
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
    // The withdrawals waiting on this identification (step-up) learn how it ended.
    await Promise.all(
      links.waiters.map(
        (w) =>
          getExternalWorkflowHandle(w)
            .signal(biometricsOutcomeSignal, { outcome: status, runId })
            .catch(() => undefined), // a withdrawal that has ended needs no answer
      ),
    );
    return flow.finish(status, reason);
  };

  for (;;) {
    const issued = await issueLink(input, { workflowId, runId, correlationId: correlation.id }, timings);
    if ('unavailable' in issued) return end('unavailable', issued.unavailable);
    transactionId = issued.transactionId;
    state.link = issued.link;
    if (state.status === 'issuing_link') await flow.moveTo('awaiting_identification');

    const left = new Date(state.link.expiresAt).getTime() - Date.now();
    const decided = await condition(() => outcome !== undefined || links.needsFresh(), Math.max(left, 1), {
      summary: 'Biometric identification outcome, until the link expires',
    });
    if (outcome) return end(outcome, outcome === 'failed' ? `liveness_${state.livenessStatus}` : undefined);
    if (!decided) return end('expired', 'no_outcome_before_link_expiry');
    // A step-up asked after this link was issued: a new link, whose outcome alone counts.
    correlation.id = uuid4();
    transactionId = undefined;
    state.livenessStatus = undefined;
  }
}
// Its link lives 30 minutes: an identification ends on the build it started on.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, biometricsWorkflow);

/** One link from the provider, valid `livenessLinkTtlMs`; or why the provider gave none. */
async function issueLink(
  input: BiometricsInput,
  ids: { workflowId: string; runId: string; correlationId: string },
  timings: FlowTimings,
): Promise<{ link: NonNullable<BiometricsState['link']>; transactionId: string } | { unavailable: string }> {
  // Taken before the call: the provider's 30 minutes start no earlier than this.
  const issuedAt = Date.now();
  try {
    const issued = await requestBiometricLink({
      ...ids,
      cpf: input.cpf,
      plan: input.plan,
      event: input.event,
      issuedAt: new Date(issuedAt).toISOString(),
    });
    return {
      link: keptLink(issued, issuedAt, timings.livenessLinkTtlMs),
      transactionId: issued.transactionId,
    };
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable) {
      const type = err.cause.type ?? 'refused';
      return {
        unavailable:
          type === NOT_BIOMETRIC_IDENTIFICATION
            ? 'not_onboarded_at_provider'
            : `liveness_${type.toLowerCase()}`,
      };
    }
    throw err;
  }
}

/**
 * Hands the run's link to every ask; `reused` once an earlier ask was given it. A withdrawal's
 * step-up needs a link issued no earlier than it was asked: an older one is replaced (needsFresh).
 */
function serveLinks(state: BiometricsState, ending: () => boolean) {
  // Whether an ask was already answered with the link: only state, no command depends on it.
  let handedOut = false;
  let freshSince = '';
  const waiters: string[] = [];
  const linkNewEnough = () => state.link !== undefined && state.link.issuedAt >= freshSince;
  const refuseWhenEnded = () => {
    if (!ending()) return;
    throw ApplicationFailure.create({
      message: `biometric identification is ${state.status}${state.reason ? `: ${state.reason}` : ''}`,
      type: BIOMETRICS_FINISHED,
      nonRetryable: true,
      details: [state.status],
    });
  };
  const answer = () => {
    refuseWhenEnded();
    const link = state.link as NonNullable<BiometricsState['link']>;
    const reused = handedOut;
    handedOut = true;
    return { link, reused };
  };
  const validator = () => {
    if (ending()) throw new Error(`biometric identification is already ${state.status}`);
  };
  setHandler(
    biometricLinkUpdate,
    async () => {
      // Asked at start (update-with-start): the answer waits for the provider's link.
      await condition(() => state.link !== undefined || ending());
      return answer();
    },
    { validator },
  );
  setHandler(
    biometricStepUpUpdate,
    async (ask: StepUpAsk) => {
      if (!waiters.includes(ask.waiter)) waiters.push(ask.waiter);
      if (ask.askedAt > freshSince) freshSince = ask.askedAt;
      if (!linkNewEnough()) handedOut = false;
      await condition(() => linkNewEnough() || ending());
      return answer();
    },
    { validator: (_ask: StepUpAsk) => validator() },
  );
  return {
    waiters,
    /** A step-up waits for a link newer than the one out (ISO times of one clock compare as text). */
    needsFresh: () => state.link !== undefined && !linkNewEnough(),
  };
}
