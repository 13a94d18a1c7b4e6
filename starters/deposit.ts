import { randomInt, randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { escapeMarkdown } from '../common/markdown';
import { maskCpf } from '../common/mask';
import { formatBrl } from '../common/money';
import { cpfHash } from '../common/pii';
import { qrDataUrl } from '../common/qr-image';
import { startSearchAttributes } from '../common/search-attributes';
import type { CustomerVerification } from '../contracts/customer';
import {
  DEPOSIT_CONFLICT,
  DEPOSIT_FAILED,
  DEPOSIT_REFUSED,
  type DepositFingerprint,
  type DepositInput,
  type DepositQr,
  type DepositQrAnswer,
  type DepositRefusal,
  type DepositRefusalReason,
  type DepositState,
  depositStateQuery,
  depositWorkflowId,
  qrCodeUpdate,
} from '../contracts/deposit';
import { DEFAULT_BRAND } from '../contracts/flow';
import { type DepositRequestBody, merchantOfFlow } from './requests';
import { requestHash, startOrAttach } from './start-or-attach';
import type { StarterDeps, StartResult } from './types';
import { flowState, runRecord } from './workflow-calls';

// Starting a deposit: update-with-start creates its flow (or attaches to it) and waits for its QR.
// The flow screens it under the rules first (activities/deposit-screening.ts): a refused deposit
// is a flow that ended `refused`, and its refusal is this starter's answer.

/** A deposit's answer: its QR, with the image drawn. */
export interface DepositAnswer {
  txid: string;
  qr: DepositQr & { image: string };
}

export type DepositStartResult =
  | StartResult<DepositAnswer, DepositRefusal>
  /** The provider refused to create it (its txid taken, data it will not take): nothing was created. */
  | { outcome: 'failed'; workflowId: string; reason: string | undefined };

/** 32 random digits: a valid txid (digits only, at most 33). */
export function newTxid(): string {
  let s = '';
  for (let i = 0; i < 32; i++) s += String(randomInt(10));
  return s;
}

/**
 * A completed deposit's state with its QR, which the run's result leaves out and its history
 * keeps: a held deposit's run was continued with the deposit's state (its input's `state`), a
 * deposit's run answered it to the `qrCode` update.
 */
async function withQrOfRun(state: DepositState, run: WorkflowHandle): Promise<DepositState> {
  const { input, updateAnswers } = await runRecord(run, qrCodeUpdate.name);
  const qr =
    (input as { state?: { qr?: DepositQr } } | undefined)?.state?.qr ??
    (updateAnswers[0] as DepositQrAnswer | undefined)?.qr;
  return qr ? { ...state, qr } : state;
}

/** A deposit's state, running or finished (starters/workflow-calls.ts). */
export const depositState = (handle: WorkflowHandle) => flowState(handle, depositStateQuery, withQrOfRun);

/**
 * The QR as the caller gets it, with its image: drawn from the payload, which is all a flow needs
 * to keep (an image a flow holds, the provider's, is the same code).
 */
async function withQrImage(qr: DepositQr): Promise<DepositQr & { image: string }> {
  return { ...qr, image: qr.image ?? (await qrDataUrl(qr.payload)) };
}

/** The versions a refusal was decided under: the operator's, and its brand's overrides' if set. */
type Versions = { policyVersion?: number; brandPolicyVersion?: number };

/** How the flow failed the QR update: the rules' refusal (with the policy versions), or the provider's. */
type FlowRefusal = ({ refused: DepositRefusal } & Versions) | { failed: string };

const versionsOf = ({ policyVersion, brandPolicyVersion }: Versions): Versions => ({
  ...(policyVersion === undefined ? {} : { policyVersion }),
  ...(brandPolicyVersion === undefined ? {} : { brandPolicyVersion }),
});

export function flowRefusal(cause: Error | undefined): FlowRefusal | undefined {
  if (!(cause instanceof ApplicationFailure)) return undefined;
  if (cause.type === DEPOSIT_FAILED) return { failed: cause.message };
  if (cause.type !== DEPOSIT_REFUSED) return undefined;
  const { policyVersion, brandPolicyVersion, ...refused } = (cause.details?.[0] ?? {}) as DepositRefusal &
    Versions;
  return { refused, ...versionsOf({ policyVersion, brandPolicyVersion }) };
}

/**
 * One round trip: update-with-start creates the flow (or attaches to the running one) and waits
 * for its QR, or for its refusal. Whether this request started the flow the update answers,
 * comparing `requestId` with the one in the flow's input. The flow is `brand`'s: its workflow id,
 * its row and its PixflowBrand tag; the default brand's input names none, as before brands.
 */
export async function startDeposit(
  { config, temporal, timings, brandMerchant }: StarterDeps,
  body: DepositRequestBody,
  requestId: string = randomUUID(),
  brand: string = DEFAULT_BRAND,
): Promise<DepositStartResult> {
  const input: DepositInput = {
    ...body,
    requestId,
    txid: body.txid ?? newTxid(),
    merchant: await merchantOfFlow(config, brand, body.merchant, brandMerchant),
    ...(timings ? { timings } : {}),
    ...(brand === DEFAULT_BRAND ? {} : { brand }),
  };
  const fingerprint: DepositFingerprint = {
    amountCentavos: input.amountCentavos,
    payerCpf: input.client.cpf,
    merchant: input.merchant,
  };
  const workflowId = depositWorkflowId(input.txid, brand);
  const masked = maskCpf(input.client.cpf);
  const outcome = await startOrAttach(temporal, qrCodeUpdate, [{ ...fingerprint, requestId }], {
    workflowType: 'depositWorkflow',
    options: {
      workflowId,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      args: [input],
      staticSummary: escapeMarkdown(
        `Deposit ${formatBrl(input.amountCentavos)} — txid ${input.txid.slice(0, 8)}…, payer ${masked}`,
      ),
      typedSearchAttributes: startSearchAttributes({
        type: 'deposit',
        cpfHash: cpfHash(input.client.cpf, config.PII_HASH_KEY),
        cpfMasked: masked,
        amountCentavos: input.amountCentavos,
        merchant: input.merchant,
        brand,
      }),
    },
    requestHash: { memoKey: 'fingerprintHash', value: requestHash(fingerprint, config.PII_HASH_KEY) },
    conflictReason: DEPOSIT_CONFLICT,
    refusal: flowRefusal,
  });
  const { txid } = input;
  switch (outcome.kind) {
    case 'conflict':
      return { outcome: 'conflict', workflowId, reason: outcome.reason };
    case 'refused': {
      const r = outcome.refusal;
      if ('failed' in r) return { outcome: 'failed', workflowId, reason: r.failed };
      return refused(workflowId, r.refused, r);
    }
    case 'closed': {
      // The same deposit again, closed: its refusal, or its QR if it ever had one.
      const state = await depositState(outcome.closed);
      if (state.refusal) return refused(workflowId, state.refusal, state);
      if (!state.qr) return { outcome: 'failed', workflowId, reason: state.reason };
      return {
        outcome: 'attached',
        workflowId,
        answer: { txid, qr: await withQrImage(state.qr) },
        closed: true,
      };
    }
    case 'answered': {
      const { qr, created } = outcome.answer;
      const answer = { txid, qr: await withQrImage(qr) };
      return created
        ? { outcome: 'started', workflowId, answer }
        : { outcome: 'attached', workflowId, answer, closed: false };
    }
  }
}

const refused = (workflowId: string, refusal: DepositRefusal, decided: Versions) =>
  ({
    outcome: 'refused',
    workflowId,
    reason: refusal.reason,
    ...versionsOf(decided),
    details: refusal,
  }) as const;

/** How a person whose verification is not `approved` gets there. */
const toBeVerified: Record<Exclude<CustomerVerification, 'approved'>, string> = {
  none: 'pixflow has no onboarding of this person: onboard them (POST /v1/onboardings) and have it approved',
  pending: 'their onboarding is still running: a deposit can be made once it is approved',
  rejected: 'their onboarding was rejected: deposits need an approved one',
  expired:
    'their onboarding expired before it was approved: start it again (POST /v1/onboardings) and have it approved',
  suspended:
    "their verification is suspended (the provider contradicted the onboarding's outcome) until an operator decides",
};

/** The `type` a caller branches on, for each reason (the API's problem type, the Nexus failure's). */
export const depositRefusalTypes: Record<DepositRefusalReason, string> = {
  not_verified: 'not-verified',
  impeded: 'impeded',
  closed: 'customer-closed',
  deposit_limit_exceeded: 'deposit-limit-exceeded',
  eligibility_unavailable: 'eligibility-unavailable',
};

/**
 * A refused deposit as its caller is told, through the API or Nexus alike: its type, a title and
 * the words that say what to do, and its fields (nothing personal: they cross to a Nexus caller
 * in the clear).
 */
export function describeDepositRefusal(refusal: DepositRefusal): {
  type: string;
  title: string;
  detail: string;
  fields: Record<string, unknown>;
} {
  const type = depositRefusalTypes[refusal.reason];
  const { reason: _reason, ...fields } = refusal;
  switch (refusal.reason) {
    case 'not_verified':
      return {
        type,
        title: 'The person is not verified',
        detail: `the person's verification is ${refusal.verification}; ${toBeVerified[refusal.verification]}`,
        fields,
      };
    case 'impeded': {
      const { reason, until } = refusal.impeded;
      return {
        type,
        title: 'The person is impeded from betting',
        detail: `the registry of impeded people names this person (${reason}${until ? ` until ${until}` : ''}): no deposit can be taken; withdrawals of their balance to their own account go on`,
        fields,
      };
    }
    case 'closed':
      return {
        type,
        title: "The person's account is closed",
        detail:
          'an operator closed this account because the registry of impeded people named the person: no deposit can be taken until an operator reinstates them; withdrawals of their balance to their own account go on',
        fields,
      };
    case 'deposit_limit_exceeded': {
      const left = Object.entries(refusal.remainingCentavos)
        .map(([period, centavos]) => `${period} ${formatBrl(centavos)}`)
        .join(', ');
      return {
        type,
        title: "Over the person's deposit limit",
        detail: `the deposit would pass the person's own ${refusal.exceeded.join(', ')} deposit limit; left: ${left}`,
        fields,
      };
    }
    case 'eligibility_unavailable':
      return {
        type,
        title: 'The registry of impeded people could not be reached',
        detail:
          'the eligibility registry did not answer while the deposit was screened, and no deposit is taken without its check: nothing was created at the provider; ask again with a new txid',
        fields,
      };
  }
}
