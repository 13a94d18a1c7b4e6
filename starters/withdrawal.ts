import { escapeMarkdown } from '../common/markdown';
import { maskCpf } from '../common/mask';
import { formatBrl } from '../common/money';
import { cpfHash } from '../common/pii';
import { startSearchAttributes } from '../common/search-attributes';
import { DEFAULT_BRAND } from '../contracts/flow';
import {
  WITHDRAWAL_CONFLICT,
  type WithdrawalInput,
  type WithdrawalRequest,
  type WithdrawalState,
  withdrawalRequestUpdate,
  withdrawalStateQuery,
  withdrawalWorkflowId,
} from '../contracts/withdrawal';
import { merchantOfFlow } from './requests';
import { type FlowStart, requestHash, startOrAttach } from './start-or-attach';
import type { StarterDeps, StartResult } from './types';
import { flowState } from './workflow-calls';

// Starting a withdrawal: update-with-start creates its flow (or attaches to it) and answers its
// state once the money rules have decided, in the flow's first workflow task. One they refused
// there is this starter's refusal, with the state the flow ended in.

/** The `type` a caller branches on for a withdrawal the rules refused (its `reason` says which rule). */
export const WITHDRAWAL_REFUSED_TYPE = 'withdrawal-refused';

export type WithdrawalStartResult = StartResult<WithdrawalState, WithdrawalState>;

/**
 * How a withdrawal's flow is started: its id, its tags for the UI, the request's keyed hash. The
 * flow is the brand's its request names (none: the default brand's).
 */
export function withdrawalStart(
  config: StarterDeps['config'],
  input: WithdrawalInput,
  request: WithdrawalRequest,
): FlowStart<(input: WithdrawalInput) => Promise<WithdrawalState>, never> {
  const masked = maskCpf(input.client.cpf);
  const brand = input.brand ?? DEFAULT_BRAND;
  return {
    workflowType: 'withdrawalWorkflow',
    options: {
      workflowId: withdrawalWorkflowId(input.transactionId, brand),
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [input],
      staticSummary: escapeMarkdown(
        `Withdrawal ${formatBrl(input.amountCentavos)} — ${input.transactionId}, payee ${masked} (${input.pixType} key)`,
      ),
      typedSearchAttributes: startSearchAttributes({
        type: 'withdrawal',
        cpfHash: cpfHash(input.client.cpf, config.PII_HASH_KEY),
        cpfMasked: masked,
        amountCentavos: input.amountCentavos,
        merchant: input.merchant,
        brand,
      }),
    },
    requestHash: { memoKey: 'requestHash', value: requestHash(request, config.PII_HASH_KEY) },
    conflictReason: WITHDRAWAL_CONFLICT,
  };
}

/**
 * One round trip: update-with-start creates the flow (or attaches to the running one) and
 * answers its state once the first workflow task is done. Idempotent per transactionId: the
 * update's validator refuses a request that differs from the one that started the flow (a
 * conflict, nothing is sent). A finished flow is never started again: its memo's keyed hash of
 * the request tells a repeat (its state) from a conflict. `started` is unknown for a withdrawal
 * (its update does not say): a first answer is `started`, as the API has always answered it.
 */
export async function startWithdrawal(
  { config, temporal, timings, brandMerchant }: StarterDeps,
  asked: WithdrawalRequest,
  brand: string = DEFAULT_BRAND,
): Promise<WithdrawalStartResult> {
  // The brand is part of what was asked (a repeat must be the same brand's: its id says so anyway);
  // the default brand's request names none, so requests from before brands still hash the same.
  // Another brand's payout leaves its own account's merchant, whatever was asked: its flow says so.
  const request: WithdrawalRequest =
    brand === DEFAULT_BRAND
      ? asked
      : { ...asked, merchant: await merchantOfFlow(config, brand, asked.merchant, brandMerchant), brand };
  const input: WithdrawalInput = { ...request, ...(timings ? { timings } : {}) };
  const start = withdrawalStart(config, input, request);
  const { workflowId } = start.options;
  const outcome = await startOrAttach(temporal, withdrawalRequestUpdate, [request], start);
  if (outcome.kind === 'conflict') return { outcome: 'conflict', workflowId, reason: outcome.reason };
  if (outcome.kind === 'refused') return outcome.refusal;
  const closed = outcome.kind === 'closed';
  const state = closed ? await flowState(outcome.closed, withdrawalStateQuery) : outcome.answer;
  if (state.status === 'refused') {
    return {
      outcome: 'refused',
      workflowId,
      reason: state.reason ?? 'refused',
      ...(state.policyVersion === undefined ? {} : { policyVersion: state.policyVersion }),
      ...(state.brandPolicyVersion === undefined ? {} : { brandPolicyVersion: state.brandPolicyVersion }),
      details: state,
    };
  }
  return closed
    ? { outcome: 'attached', workflowId, answer: state, closed: true }
    : { outcome: 'started', workflowId, answer: state };
}
