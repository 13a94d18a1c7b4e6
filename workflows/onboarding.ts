import { isValid as isValidCpf } from '@fnando/cpf';
import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  patched,
  proxyActivities,
  setHandler,
  setWorkflowOptions,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { createEligibilityActivities } from '../activities/eligibility';
import type { createOnboardingActivities } from '../activities/onboarding';
import { resolveTimings } from '../contracts/flow';
import {
  type LivenessLink,
  type LivenessLinkAnswer,
  type LivenessProgress,
  livenessLinkUpdate,
  livenessProgressSignal,
  ONBOARDING_FINISHED,
  type OnboardingInput,
  type OnboardingState,
  onboardingFinalStatuses,
  onboardingStateQuery,
  reviewSignal,
} from '../contracts/onboarding';
import { IMPEDED_PREFIX } from '../contracts/reasons';
import { DECISION_PROOFS_PATCH, isProven } from './decision-proofs';
import { FlowTracker, isoNow, PROVIDER_CALL_OPTIONS } from './flow-lifecycle';
import { keptLink } from './liveness-link';
import { livenessStageOf } from './liveness-progress';

type OnboardingActivities = ReturnType<typeof createOnboardingActivities>;
const { checkKyc } = proxyActivities<OnboardingActivities>({
  ...PROVIDER_CALL_OPTIONS,
  summary: 'Ask the CPF registry (KYC); keep the record in Postgres',
});
const { requestLivenessLink } = proxyActivities<OnboardingActivities>({
  ...PROVIDER_CALL_OPTIONS,
  summary: 'Ask the provider for a liveness link',
});

const { checkEligibility } = proxyActivities<ReturnType<typeof createEligibilityActivities>>({
  ...PROVIDER_CALL_OPTIONS,
  summary: 'Ask the registry of impeded people about the person; keep the answer in Postgres',
});

/** Liveness states after which the user has finished the process: the link is spent. */
const PROCESS_DONE = ['completed', 'failed', 'manual_approve_pending', 'manual_approved', 'manual_refused'];

/**
 * Onboarding: KYC, the registry of impeded people, then liveness. The flow holds the user's current liveness link and hands it
 * out again while it is valid (30 minutes, until the process completes), asking the provider for
 * a new one only after. Liveness progress arrives as signals from the webhook ingress; a pending
 * manual review waits for an operator's decision.
 */
export async function onboardingWorkflow(input: OnboardingInput): Promise<OnboardingState> {
  const timings = resolveTimings(input.timings);
  const state: OnboardingState = {
    status: 'kyc',
    reasons: [],
    flags: { pep: false },
    startedAt: isoNow(),
    updatedAt: isoNow(),
  };
  const flow = new OnboardingFlow(input, state);
  setHandler(onboardingStateQuery, () => state);
  const liveness = serveLiveness(input, state, timings.livenessLinkTtlMs, flow);
  setHandler(reviewSignal, async ({ decisionId, ...review }) => {
    const open = () => state.status === 'awaiting_review' && !state.review;
    if (!open()) return;
    // Onboardings reviewed before the check replay without it. An unproven review is ignored
    // (refused and counted by the check), as a late one is.
    if (patched(DECISION_PROOFS_PATCH)) {
      const claim = { kind: 'onboarding.review', decisionId, operator: review.by, ...review } as const;
      if (!(await isProven(claim)) || !open()) return;
    }
    state.review = review;
  });

  const onboard = async (): Promise<void> => {
    // Wrong check digits never reach the provider.
    if (!isValidCpf(input.cpf)) return flow.moveTo('rejected', 'invalid_document');
    const kyc = await checkKyc({ workflowId: workflowInfo().workflowId, cpf: input.cpf, plan: input.plan });
    state.flags.pep = kyc.pep;
    if (!kyc.pass) {
      state.reasons.push(...kyc.reasons);
      return flow.moveTo('rejected');
    }
    // Onboardings that passed this point before the check existed replay without it.
    if (patched('eligibility-check')) {
      const eligibility = await checkEligibility({ cpf: input.cpf });
      if (eligibility.status === 'impeded')
        return flow.moveTo('rejected', `${IMPEDED_PREFIX}${eligibility.reason}`);
    }
    const refused = await firstLinkRefusal(liveness.issueLink);
    if (refused) return flow.moveTo('rejected', refused);
    await flow.moveTo('awaiting_liveness');
    return decide(state, liveness.progress, flow);
  };

  // An abandoned onboarding ends `expired` at the deadline, wherever it is.
  const finished = await Promise.race([
    onboard().then(() => true),
    condition(() => false, timings.onboardingDeadlineMs, { summary: 'Onboarding deadline' }),
  ]);
  if (!finished && !flow.isFinal()) return flow.finish('expired', 'deadline_passed');
  return flow.settle();
}
// It may wait a week for the person and the reviewer: each workflow task runs on the current
// build, so a change to it is made with `patched` (docs/versioning.md).
setWorkflowOptions({ versioningBehavior: 'AUTO_UPGRADE' }, onboardingWorkflow);

/** An onboarding's status changes: a reason given is added to the state's reasons. */
class OnboardingFlow extends FlowTracker<OnboardingState['status'], OnboardingState> {
  constructor(input: OnboardingInput, state: OnboardingState) {
    super({ type: 'onboarding', businessId: input.cpf, cpf: input.cpf }, state, onboardingFinalStatuses);
  }

  protected override details() {
    return { reasons: this.state.reasons, pep: this.state.flags.pep };
  }

  protected override keepReason(reason: string | undefined) {
    if (reason) this.state.reasons.push(reason);
  }
}

/** The first liveness link; a provider refusal (non-retryable) is the onboarding's reason to reject. */
async function firstLinkRefusal(issueLink: () => Promise<LivenessLink>): Promise<string | undefined> {
  try {
    await issueLink();
    return undefined;
  } catch (err) {
    if (err instanceof ActivityFailure && err.cause instanceof ApplicationFailure && err.cause.nonRetryable) {
      return `liveness_${(err.cause.type ?? 'refused').toLowerCase()}`;
    }
    throw err;
  }
}

/** Liveness callbacks and the operator's review decide, in the order they arrive. */
async function decide(state: OnboardingState, progress: string[], flow: OnboardingFlow): Promise<void> {
  for (;;) {
    await condition(() => progress.length > 0 || state.review !== undefined);
    const review = state.review;
    if (review && state.status === 'awaiting_review') {
      return flow.moveTo(
        review.decision === 'approve' ? 'approved' : 'rejected',
        `review_${review.decision}d`,
      );
    }
    const liveness = progress.shift();
    if (liveness === 'completed' || liveness === 'manual_approved') return flow.moveTo('approved');
    if (liveness === 'failed') return flow.moveTo('rejected', 'liveness_failed');
    if (liveness === 'manual_refused') return flow.moveTo('rejected', 'liveness_refused');
    if (liveness === 'manual_approve_pending' && state.status !== 'awaiting_review') {
      await flow.moveTo('awaiting_review');
    }
  }
}

/**
 * The user's liveness link, handed out again while it is valid and unspent, and the liveness
 * callbacks, queued in arrival order for `decide`.
 */
function serveLiveness(input: OnboardingInput, state: OnboardingState, ttlMs: number, flow: OnboardingFlow) {
  let linkSpent = false;
  // Whether an ask was already answered with the current link: the flow issues the first link
  // itself, so the first ask gets a link new to the caller. Only state: no command depends on it.
  let linkHandedOut = false;
  let renewal: Promise<LivenessLink> | undefined;

  const requests = ownRequests();

  const issueLink = async (): Promise<LivenessLink> => {
    // Taken before the call: the provider's 30 minutes start no earlier than this.
    const issuedAt = Date.now();
    const correlationId = uuid4();
    requests.sending(correlationId);
    let transactionId: string | undefined;
    try {
      const issued = await requestLivenessLink({
        workflowId: workflowInfo().workflowId,
        cpf: input.cpf,
        plan: input.plan,
        event: input.event,
        redirectUrl: input.redirectUrl,
        correlationId,
      });
      transactionId = issued.transactionId;
      linkSpent = false;
      linkHandedOut = false;
      state.link = keptLink(issued, issuedAt, ttlMs);
      return state.link;
    } finally {
      for (const p of requests.answered(transactionId)) onProgress(p);
    }
  };
  const linkValid = () =>
    state.link !== undefined && !linkSpent && Date.now() < new Date(state.link.expiresAt).getTime();

  setHandler(
    livenessLinkUpdate,
    async (): Promise<LivenessLinkAnswer> => {
      // Asked right after start: wait for the first link rather than racing KYC.
      await condition(() => state.link !== undefined || flow.isFinal());
      if (flow.isFinal())
        throw ApplicationFailure.nonRetryable(`onboarding is ${state.status}`, ONBOARDING_FINISHED);
      if (linkValid() && !renewal) {
        const reused = linkHandedOut;
        linkHandedOut = true;
        return { link: state.link!, reused };
      }
      // Concurrent callers share one provider call and get the same new link.
      renewal ??= issueLink().finally(() => {
        renewal = undefined;
      });
      const link = await renewal;
      linkHandedOut = true;
      return { link, reused: false };
    },
    {
      validator: () => {
        if (flow.isFinal()) throw new Error(`onboarding is already ${state.status}`);
      },
    },
  );

  const progress: string[] = [];
  const onProgress = (p: LivenessProgress) => {
    if (flow.isFinal() || !requests.admit(p)) return;
    progress.push(p.statusVerification);
    // Callbacks can arrive out of order: a late earlier stage never hides the current link's outcome.
    if (!linkSpent || livenessStageOf(p.statusVerification) >= livenessStageOf(state.livenessStatus)) {
      state.livenessStatus = p.statusVerification;
    }
    state.updatedAt = isoNow();
    if (PROCESS_DONE.includes(p.statusVerification)) linkSpent = true;
  };
  setHandler(livenessProgressSignal, onProgress);

  return { issueLink, progress };
}

/**
 * The liveness requests this onboarding made (the ingress checks the same in Postgres): progress
 * naming another request is not its news. Every one of them counts: a decision about an earlier
 * link (the provider's review) can come after a new link was issued.
 */
function ownRequests() {
  const correlationIds: string[] = [];
  const transactionIds: string[] = [];
  let inFlight = 0;
  // Progress naming none of them, held while a request waits for the provider's answer: it may
  // name the transaction_id that answer brings.
  const held: LivenessProgress[] = [];
  const names = (p: LivenessProgress) =>
    // Naming no request at all: pixflow's own signal (the ingress's always name one).
    (p.correlationId === undefined && p.transactionId === undefined) ||
    (p.correlationId !== undefined && correlationIds.includes(p.correlationId)) ||
    (p.transactionId !== undefined && transactionIds.includes(p.transactionId));
  return {
    /** A request about to be sent: its correlation_id counts from now on. */
    sending(correlationId: string) {
      correlationIds.push(correlationId);
      inFlight += 1;
    },
    /** Its answer (none if it failed): returns the progress held meanwhile, to be admitted again. */
    answered(transactionId: string | undefined): LivenessProgress[] {
      if (transactionId) transactionIds.push(transactionId);
      inFlight -= 1;
      return held.splice(0);
    },
    /** Whether the progress is this onboarding's; if not, it is held while a request is in flight. */
    admit(p: LivenessProgress): boolean {
      if (names(p)) return true;
      if (inFlight > 0) held.push(p);
      return false;
    },
  };
}
