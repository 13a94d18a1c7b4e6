import { isValid as isValidCpf } from '@fnando/cpf';
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  proxyActivities,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createOnboardingActivities } from '../activities/onboarding';
import {
  type LivenessLink,
  type LivenessLinkAnswer,
  livenessLinkUpdate,
  livenessProgressSignal,
  type OnboardingState,
  type OnboardingStatus,
  onboardingStateQuery,
  reviewSignal,
} from './definitions';
import { flowRecorder, isoNow } from './flow-record';
import type { OnboardingInput } from './inputs';
import { PROVIDER_RETRY, timings } from './timings';

type Acts = ReturnType<typeof createOnboardingActivities>;
const { checkKyc } = proxyActivities<Acts>({
  startToCloseTimeout: '30s',
  retry: PROVIDER_RETRY,
  summary: 'Ask the CPF registry (KYC); keep the record in Postgres',
});
const { requestLivenessLink } = proxyActivities<Acts>({
  startToCloseTimeout: '30s',
  retry: PROVIDER_RETRY,
  summary: 'Ask the provider for a liveness link',
});

const FINAL: OnboardingStatus[] = ['approved', 'rejected', 'expired'];

/** Liveness states after which the user has finished the process: the link is spent. */
const PROCESS_DONE = ['completed', 'failed', 'manual_approve_pending', 'manual_approved', 'manual_refused'];
/** Order of liveness states: requested, processing, pending review, then any outcome. */
const LIVENESS_STAGE: Record<string, number> = { requested: 0, processing: 1, manual_approve_pending: 2 };
const stage = (s: string | undefined) => (s === undefined ? -1 : (LIVENESS_STAGE[s] ?? 3));

/**
 * Onboarding: KYC, then liveness. The flow holds the user's current liveness link and hands it
 * out again while it is valid (30 minutes, until the process completes), asking the provider for
 * a new one only after. Liveness progress arrives as signals from the webhook ingress.
 */
export async function onboardingWorkflow(input: OnboardingInput): Promise<OnboardingState> {
  const t = timings(input.timings);
  const record = flowRecorder({ type: 'onboarding', businessId: input.cpf, cpf: input.cpf });
  const state: OnboardingState = {
    status: 'kyc',
    reasons: [],
    flags: { pep: false },
    startedAt: isoNow(),
    updatedAt: isoNow(),
  };
  let linkSpent = false;
  let renewal: Promise<LivenessLink> | undefined;

  setHandler(onboardingStateQuery, () => state);

  const move = async (status: OnboardingStatus, reason?: string) => {
    state.status = status;
    state.updatedAt = isoNow();
    if (reason) state.reasons.push(reason);
    if (FINAL.includes(status)) state.finishedAt = state.updatedAt;
    await record(status, { reason, details: { reasons: state.reasons, pep: state.flags.pep } });
  };

  const issueLink = async (): Promise<LivenessLink> => {
    // Taken before the call: the provider's 30 minutes start no earlier than this.
    const issuedAt = Date.now();
    const issued = await requestLivenessLink({
      cpf: input.cpf,
      plan: input.plan,
      event: input.event,
      redirectUrl: input.redirectUrl,
      correlationId: uuid4(),
    });
    linkSpent = false;
    state.link = {
      url: issued.url,
      qrcode: issued.qrcode,
      type: issued.type,
      issuedAt: new Date(issuedAt).toISOString(),
      expiresAt: new Date(issuedAt + t.livenessLinkTtlMs).toISOString(),
    };
    return state.link;
  };

  const linkValid = () =>
    state.link !== undefined && !linkSpent && Date.now() < new Date(state.link.expiresAt).getTime();

  setHandler(
    livenessLinkUpdate,
    async (): Promise<LivenessLinkAnswer> => {
      // Asked right after start: wait for the first link rather than racing KYC.
      await condition(() => state.link !== undefined || FINAL.includes(state.status));
      if (FINAL.includes(state.status)) {
        throw ApplicationFailure.nonRetryable(`onboarding is ${state.status}`, 'OnboardingFinished');
      }
      if (linkValid() && !renewal) return { link: state.link!, reused: true };
      // Concurrent callers share one provider call and get the same new link.
      renewal ??= issueLink().finally(() => {
        renewal = undefined;
      });
      return { link: await renewal, reused: false };
    },
    {
      validator: () => {
        if (FINAL.includes(state.status)) throw new Error(`onboarding is already ${state.status}`);
      },
    },
  );

  // Callbacks queue up in arrival order; the loop below applies them one by one.
  const progress: string[] = [];
  setHandler(livenessProgressSignal, (p) => {
    if (FINAL.includes(state.status)) return;
    progress.push(p.statusVerification);
    // Callbacks can arrive out of order: a late earlier stage never hides the current link's outcome.
    if (!linkSpent || stage(p.statusVerification) >= stage(state.livenessStatus)) {
      state.livenessStatus = p.statusVerification;
    }
    state.updatedAt = isoNow();
    if (PROCESS_DONE.includes(p.statusVerification)) linkSpent = true;
  });

  setHandler(reviewSignal, (decision) => {
    if (state.status !== 'awaiting_review' || state.review) return;
    state.review = decision;
  });

  const run = async (): Promise<void> => {
    // Wrong check digits never reach the provider.
    if (!isValidCpf(input.cpf)) return move('rejected', 'invalid_document');
    const kyc = await checkKyc({ workflowId: workflowInfo().workflowId, cpf: input.cpf, plan: input.plan });
    state.flags.pep = kyc.pep;
    if (!kyc.pass) {
      state.reasons.push(...kyc.reasons);
      return move('rejected');
    }
    try {
      await issueLink();
    } catch (err) {
      if (
        err instanceof ActivityFailure &&
        err.cause instanceof ApplicationFailure &&
        err.cause.nonRetryable
      ) {
        return move('rejected', `liveness_${(err.cause.type ?? 'refused').toLowerCase()}`);
      }
      throw err;
    }
    await move('awaiting_liveness');

    // Liveness callbacks and the operator's review drive the rest.
    for (;;) {
      await condition(() => progress.length > 0 || state.review !== undefined);
      const review = state.review;
      if (review && state.status === 'awaiting_review') {
        return move(review.decision === 'approve' ? 'approved' : 'rejected', `review_${review.decision}d`);
      }
      const lv = progress.shift();
      if (lv === 'completed' || lv === 'manual_approved') return move('approved');
      if (lv === 'failed') return move('rejected', 'liveness_failed');
      if (lv === 'manual_refused') return move('rejected', 'liveness_refused');
      if (lv === 'manual_approve_pending' && state.status !== 'awaiting_review')
        await move('awaiting_review');
    }
  };

  // An abandoned onboarding ends `expired` at the deadline, wherever it is.
  const finished = await Promise.race([
    run().then(() => true),
    condition(() => false, t.onboardingDeadlineMs, { summary: 'Onboarding deadline' }),
  ]);
  if (!finished && !FINAL.includes(state.status)) await move('expired', 'deadline_passed');
  await condition(allHandlersFinished);
  return state;
}
