import type { Client } from '@temporalio/client';
import type { Config } from '../common/config';
import { escapeMarkdown } from '../common/markdown';
import { maskCpf } from '../common/mask';
import { cpfHash } from '../common/pii';
import { startSearchAttributes } from '../common/search-attributes';
import {
  type OnboardingInput,
  type OnboardingState,
  onboardingFinalStatuses,
  onboardingStateQuery,
  onboardingWorkflowId,
} from '../contracts/onboarding';
import type { StarterDeps, StartResult } from './types';
import { flowState, isAlreadyStarted } from './workflow-calls';

// Starting an onboarding: idempotent per CPF, and an expired one starts over. The API starts it
// and answers its state; the Nexus service starts it as its operation's run (its own `start`).

export type Reuse = 'REJECT_DUPLICATE' | 'ALLOW_DUPLICATE';

/** How an onboarding's flow is started: its id (the keyed hash of the CPF), its tags for the UI. */
export function onboardingStart(config: Config, input: OnboardingInput) {
  return {
    workflowId: onboardingWorkflowId(cpfHash(input.cpf, config.PII_HASH_KEY)),
    taskQueue: config.TEMPORAL_TASK_QUEUE,
    args: [input] as [OnboardingInput],
    staticSummary: escapeMarkdown(`Onboarding ${maskCpf(input.cpf)} — ${input.plan}`),
    // The labels bold, the caller's values as they are.
    staticDetails: [
      `**event** ${escapeMarkdown(input.event)}`,
      input.userRef ? `**userRef** ${escapeMarkdown(input.userRef)}` : undefined,
      `**plan** ${escapeMarkdown(input.plan)}`,
    ]
      .filter(Boolean)
      .join('\n\n'),
    typedSearchAttributes: startSearchAttributes({
      type: 'onboarding',
      status: 'kyc',
      cpfHash: cpfHash(input.cpf, config.PII_HASH_KEY),
      cpfMasked: maskCpf(input.cpf),
    }),
  };
}

/**
 * Idempotent per CPF: an existing onboarding is answered as it is; only an expired one starts
 * over. `start` starts the flow (onboardingStart) with the given reuse policy, or throws that it
 * exists already; its conflict policy says whether a running one is an error or is joined.
 * Answers what `start` answered, or the state of the onboarding that exists.
 */
export async function startOnboardingOnce<T>(
  temporal: Client,
  config: Config,
  input: OnboardingInput,
  start: (reuse: Reuse) => Promise<T>,
): Promise<{ started: T } | { existing: OnboardingState }> {
  try {
    return { started: await start('REJECT_DUPLICATE') };
  } catch (err) {
    if (!isAlreadyStarted(err)) throw err;
  }
  const current = await flowState(
    temporal.workflow.getHandle(onboardingWorkflowId(cpfHash(input.cpf, config.PII_HASH_KEY))),
    onboardingStateQuery,
  );
  // An abandoned (expired) onboarding is not an answer: the person starts over.
  if (current.status !== 'expired') return { existing: current };
  try {
    return { started: await start('ALLOW_DUPLICATE') };
  } catch (again) {
    if (!isAlreadyStarted(again)) throw again;
    return { existing: current };
  }
}

/** An onboarding refuses nobody at its start, and a second request for a CPF is its repeat. */
export type OnboardingStartResult = Extract<
  StartResult<OnboardingState, never>,
  { outcome: 'started' } | { outcome: 'attached' }
>;

/**
 * Starts the person's onboarding, or answers the one that exists: `started` with the new flow's
 * state, `attached` with the existing one's. An onboarding refuses nobody at its start.
 */
export async function startOnboarding(
  { config, temporal, timings }: StarterDeps,
  body: Omit<OnboardingInput, 'timings'>,
): Promise<OnboardingStartResult> {
  const input: OnboardingInput = { ...body, ...(timings ? { timings } : {}) };
  const outcome = await startOnboardingOnce(temporal, config, input, (reuse) =>
    temporal.workflow.start<(input: OnboardingInput) => Promise<OnboardingState>>('onboardingWorkflow', {
      ...onboardingStart(config, input),
      // FAIL (not USE_EXISTING) so we know whether this request started it.
      workflowIdConflictPolicy: 'FAIL',
      workflowIdReusePolicy: reuse,
    }),
  );
  const workflowId = onboardingWorkflowId(cpfHash(input.cpf, config.PII_HASH_KEY));
  if ('existing' in outcome) {
    const answer = outcome.existing;
    return {
      outcome: 'attached',
      workflowId,
      answer,
      closed: onboardingFinalStatuses.includes(answer.status),
    };
  }
  const state = await flowState(temporal.workflow.getHandle(workflowId), onboardingStateQuery);
  return { outcome: 'started', workflowId, answer: state };
}
