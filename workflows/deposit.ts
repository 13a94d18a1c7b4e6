import {
  ActivityFailure,
  ApplicationFailure,
  condition,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  setWorkflowOptions,
} from '@temporalio/workflow';
import type { createDepositActivities, DepositCheck } from '../activities/deposit';
import type { createDepositScreeningActivities, DepositScreening } from '../activities/deposit-screening';
import {
  DEPOSIT_CONFLICT,
  DEPOSIT_ELIGIBILITY_UNAVAILABLE,
  DEPOSIT_FAILED,
  DEPOSIT_REFUSED,
  type DepositHoldReason,
  type DepositInput,
  type DepositQrRequest,
  type DepositRefusal,
  type DepositResolutionDecision,
  type DepositState,
  type DepositStatus,
  depositFinalStatuses,
  depositNotHeld,
  depositStateQuery,
  qrCodeUpdate,
  resolutionUpdate,
} from '../contracts/deposit';
import type { FlowRecord } from '../contracts/flow';
import { DECISION_PROOFS_PATCH, requireProof } from './decision-proofs';
import {
  awaitHint,
  FlowTracker,
  isLocalActivityFailure,
  isoNow,
  LOCAL_LOOK_OPTIONS,
  listenForProviderHints,
  PROVIDER_CALL_OPTIONS,
  type ProviderHint,
  paymentRecord,
} from './flow-lifecycle';

type DepositActivities = ReturnType<typeof createDepositActivities>;
type ScreeningActivities = ReturnType<typeof createDepositScreeningActivities>;

// The rules read our own Postgres (and the registry of impeded people when its answer is old): a
// local activity in the first workflow task, which the caller's answer waits for. The registry
// unreachable, when the rules do not let a deposit through unscreened, is asked again for about
// five minutes (1 s doubling to 30 s, 14 tries), then the deposit is refused. A wait longer than
// 2 s between tries is a timer, so no workflow task stays open through the outage.
const { screenDeposit } = proxyLocalActivities<ScreeningActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 14 },
  localRetryThreshold: '2s',
});

// A local activity: the API's caller waits for the QR, and a local activity runs inside the
// workflow task that accepted the update, so the answer needs no activity task round trip
// through the server. Safe to re-run if the task is retried: the provider answers the same QR
// for the same txid and body. Every deposit runs both activities, so they go by their names,
// without a summary: one is kept, encrypted, in each event that schedules the activity.
const { createChargeAndRecordAwaitingPayment } = proxyLocalActivities<DepositActivities>({
  startToCloseTimeout: '30s',
  // The caller waits for the QR: give up after a few minutes rather than hang.
  scheduleToCloseTimeout: '5m',
  retry: { initialInterval: '500ms', backoffCoefficient: 2, maximumInterval: '30s' },
});
const { inquireDepositAndRecordCompleted } = proxyActivities<DepositActivities>(PROVIDER_CALL_OPTIONS);
// The inquiry a hint wakes runs as a local activity first (flow-lifecycle.ts says why).
const { inquireDepositAndRecordCompleted: inquireLocally } =
  proxyLocalActivities<DepositActivities>(LOCAL_LOOK_OPTIONS);

/** What a held deposit's run starts from: the deposit so far, and the hold's reason. */
export interface HeldDepositInput {
  deposit: DepositInput;
  state: DepositState;
  hold: DepositHoldReason;
  /** The last seq of the deposit's row its run named (FlowTracker, flow-lifecycle.ts). */
  rowsWritten: number;
}

/**
 * Deposit: screened by the rules, then the Pix QR (handed to the API through the `qrCode` update
 * as soon as it exists), then the wait for payment. A notification is only a hint to look:
 * payment is proven by the deposit inquiry. A lost notification is made up for by
 * reconciliation, which looks the deposit up on its schedule and sends the hint; one last look
 * after expiry, then `expired`. A payment the rules hold (someone else paid it) continues as a
 * held deposit's run (held-deposit.ts), which waits for an operator's `resolution`.
 */
export async function depositWorkflow(input: DepositInput): Promise<DepositState> {
  const flow = openDeposit(input);
  const refusal = await screen(input, flow);
  if (refusal) return flow.finish('refused', refusal);
  const failure = await charge(input, flow);
  if (failure) return flow.finish('failed', failure);
  const payment = await awaitPayment(input, flow);
  if (!payment) return flow.finish('expired', 'qr_expired_unpaid');
  if (payment.hold) return continueAsHeld(input, flow, payment.hold);
  return flow.complete(payment.written);
}
// Minutes from the QR to its payment: a deposit ends on the build it started on.
setWorkflowOptions({ versioningBehavior: 'PINNED' }, depositWorkflow);

/** A deposit's status changes, in either of its runs. */
export class DepositFlow extends FlowTracker<DepositStatus, DepositState> {
  readonly hint: ProviderHint = listenForProviderHints(this.state);

  /**
   * `seqBefore`: where the deposit's run left its row, for the held run it continues as.
   * `statusesInSearch`: the held run shows every status in the search attribute (`held` is what
   * an operator filters for); the deposit's run none (FlowTracker says why).
   */
  constructor(
    input: DepositInput,
    state: DepositState,
    seqBefore?: number,
    statusesInSearch: readonly DepositStatus[] | 'every' = 'every',
  ) {
    super(
      paymentRecord('deposit', input.txid, input),
      state,
      depositFinalStatuses,
      seqBefore,
      statusesInSearch,
    );
  }

  protected override details() {
    const { policyVersion, brandPolicyVersion, refusal, payment, resolution, connector } = this.state;
    return {
      connector,
      policyVersion,
      brandPolicyVersion,
      refusal,
      e2eId: payment?.e2eId,
      paidAt: payment?.paidAt,
      payerIsClient: payment?.payerIsClient,
      resolution,
    };
  }

  /**
   * The final state without the QR: the history keeps it already (the local activity's marker
   * and the update's answer), and a query of the closed flow still shows it.
   */
  override async settle(): Promise<DepositState> {
    const { qr: _qr, ...result } = await super.settle();
    return result;
  }

  /** Ends it completed: its row written by the inquiry that found it paid (`written`), or now. */
  async complete(written: FlowRecord | undefined): Promise<DepositState> {
    if (!written) return this.finish('completed');
    await this.wrote({ ...written, status: 'completed' });
    return this.settle();
  }
}

/** The deposit's flow, answering its state query, the QR's requests and (refused) resolutions. */
function openDeposit(input: DepositInput): DepositFlow {
  const state: DepositState = {
    status: 'creating',
    txid: input.txid,
    amountCentavos: input.amountCentavos,
    notifications: 0,
    inquiries: 0,
    startedAt: isoNow(),
    updatedAt: isoNow(),
  };
  const flow = new DepositFlow(input, state, 0, []);
  setHandler(depositStateQuery, () => flow.state);
  answerQrRequests(input, flow.state);
  // Refused here: a deposit is held only in the run it continues as.
  answerResolutions(input, flow.state);
  return flow;
}

/**
 * Screen: the rules first, so a refused deposit ends here, recorded with its reason and the
 * rules' version, and the provider never hears of it. Answers the refusal's reason, if refused.
 */
async function screen(input: DepositInput, flow: DepositFlow): Promise<string | undefined> {
  const { state } = flow;
  const screening = await screenWithRetries(input);
  if (screening.policyVersion !== undefined) keepVersions(state, screening);
  if (screening.verdict !== 'refused') return undefined;
  state.refusal = screening.refusal;
  return screening.refusal.reason;
}

/**
 * Charge: the QR first, the caller is waiting on it, from the first connector of the deposits'
 * routing that makes it (kept in `connector`: every inquiry goes there). The same local activity
 * writes the deposit's row as awaiting payment once the QR exists, so the answer waits for one
 * activity. Answers why the QR could not be created, if it could not.
 */
async function charge(input: DepositInput, flow: DepositFlow): Promise<string | undefined> {
  const row = flow.nextRow('awaiting_payment');
  try {
    // Runs from before routing got no connector back: theirs is the first provider's.
    const { connector, ...qr } = await createChargeAndRecordAwaitingPayment(input, row);
    flow.state.qr = qr;
    if (connector !== undefined) flow.state.connector = connector;
  } catch (err) {
    const reason = qrFailureReason(err);
    if (reason === undefined) throw err;
    return reason;
  }
  await flow.wrote(row);
  return undefined;
}

/** A payment found: the rules' hold, or the `completed` row its inquiry wrote (if it did). */
interface Payment {
  hold?: DepositHoldReason;
  written?: FlowRecord;
}

/**
 * Await payment: a look on each hint until the QR expires (no reconciliation timer of its own:
 * the sweep sends the hint when it finds the deposit paid), then one last look.
 */
async function awaitPayment(input: DepositInput, flow: DepositFlow): Promise<Payment | undefined> {
  const expiry = new Date(flow.state.qr?.expiresAt ?? 0).getTime();
  while (await awaitHint(flow.hint, expiry, 'Payment, until the QR code expires')) {
    const payment = await lookForPayment(input, flow);
    if (payment) return payment;
  }
  return lookForPayment(input, flow);
}

/**
 * Asks the provider whether the person paid the deposit, first as a local activity; keeps the
 * payment when it is paid, and the rules' hold. A payment the rules let through is recorded
 * `completed` by the inquiry itself.
 */
async function lookForPayment(input: DepositInput, flow: DepositFlow): Promise<Payment | undefined> {
  const { state } = flow;
  state.inquiries += 1;
  const row = flow.nextRow('completed');
  let check: DepositCheck;
  try {
    check = await inquireLocally(input.txid, input.client.cpf, row, state.connector);
  } catch (err) {
    if (!isLocalActivityFailure(err)) throw err;
    check = await inquireDepositAndRecordCompleted(input.txid, input.client.cpf, row, state.connector);
  }
  if (!check.paid) return undefined;
  state.payment = {
    e2eId: check.e2eId ?? '',
    payerName: check.payerName,
    payerCpfMasked: check.payerCpfMasked,
    paidAt: check.paidAt,
    ...(check.payerIsClient === undefined ? {} : { payerIsClient: check.payerIsClient }),
  };
  // A hold is the rules' latest decision on the deposit: its row names the version that held it.
  if (check.hold && check.policyVersion !== undefined) keepVersions(state, check);
  return { hold: check.hold, written: check.recorded ? row : undefined };
}

/**
 * Held, it may wait days for an operator: a run of its own (held-deposit.ts), under the same
 * workflow id, which moves to newer builds.
 */
async function continueAsHeld(
  input: DepositInput,
  flow: DepositFlow,
  hold: DepositHoldReason,
): Promise<never> {
  await flow.settle();
  const continueAsNew = makeContinueAsNewFunc<(input: HeldDepositInput) => Promise<DepositState>>({
    workflowType: 'heldDepositWorkflow',
  });
  return continueAsNew({ deposit: input, state: flow.state, hold, rowsWritten: flow.lastSeq() });
}

/**
 * The `resolution` update: an operator's decision on a held deposit, refused unless the deposit
 * is held and not decided yet, and (from the `decision-proofs` patch on) unless it names the
 * record the API or back office wrote for it. It answers once the status it leads to is
 * recorded (`done`).
 */
export function answerResolutions(input: DepositInput, state: DepositState): { done: boolean } {
  const resolved = { done: false };
  const notHeld = () => {
    if (state.status !== 'held' || state.resolution) {
      throw new Error(depositNotHeld(state.status, state.resolution?.decision));
    }
  };
  setHandler(
    resolutionUpdate,
    async ({ decision, by, reason, decisionId }) => {
      // Held runs from before the check replay without it.
      if (patched(DECISION_PROOFS_PATCH)) {
        await requireProof({ kind: 'deposit.resolution', decisionId, operator: by, decision, reason });
        // Another resolution may have landed while the proof was read.
        try {
          notHeld();
        } catch (err) {
          throw ApplicationFailure.nonRetryable((err as Error).message, 'DepositNotHeld');
        }
      }
      state.resolution = { decision, by, reason, at: isoNow() };
      await condition(() => resolved.done);
      return { txid: input.txid, decision, by, reason, status: state.status };
    },
    {
      validator: (asked: DepositResolutionDecision) => {
        notHeld();
        if (asked.decision !== 'accept' && asked.decision !== 'return') {
          throw new Error('decision must be accept or return');
        }
      },
    },
  );
  return resolved;
}

/**
 * The `qrCode` update: the same txid must mean the same deposit (another amount, payer or
 * merchant is a conflict); the answer waits for the QR, or fails with the deposit.
 */
export function answerQrRequests(input: DepositInput, state: DepositState) {
  setHandler(
    qrCodeUpdate,
    async (asked) => {
      await condition(
        () => state.qr !== undefined || state.status === 'failed' || state.status === 'refused',
      );
      if (state.refusal) {
        throw ApplicationFailure.create({
          type: DEPOSIT_REFUSED,
          message: `the rules refused the deposit: ${state.refusal.reason}`,
          nonRetryable: true,
          details: [{ ...state.refusal, ...decidedUnder(state) }],
        });
      }
      if (!state.qr) throw ApplicationFailure.nonRetryable(state.reason ?? 'deposit failed', DEPOSIT_FAILED);
      return { qr: state.qr, created: asked.requestId !== undefined && asked.requestId === input.requestId };
    },
    {
      validator: (asked: DepositQrRequest) => {
        if (
          asked.amountCentavos !== input.amountCentavos ||
          asked.payerCpf !== input.client.cpf ||
          asked.merchant !== input.merchant
        ) {
          throw new Error(DEPOSIT_CONFLICT);
        }
      },
    },
  );
}

/** The versions a decision was taken under: the operator's, and its brand's overrides' when set. */
interface DecidedUnder {
  policyVersion?: number;
  brandPolicyVersion?: number;
}

/** The versions as the deposit keeps and tells them: a brand that sets nothing names none. */
const decidedUnder = ({ policyVersion, brandPolicyVersion }: DecidedUnder): DecidedUnder => ({
  policyVersion,
  ...(brandPolicyVersion === undefined ? {} : { brandPolicyVersion }),
});

/** Keeps the latest decision's versions, its brand's overrides' gone when that decision had none. */
function keepVersions(state: DepositState, decided: DecidedUnder): void {
  state.policyVersion = decided.policyVersion;
  if (decided.brandPolicyVersion === undefined) delete state.brandPolicyVersion;
  else state.brandPolicyVersion = decided.brandPolicyVersion;
}

/**
 * The rules' verdict; the registry still unreachable once the screening stops asking is a
 * refusal (`eligibility_unavailable`) under the versions the last try read.
 */
async function screenWithRetries(
  input: DepositInput,
): Promise<DepositScreening | ({ verdict: 'refused'; refusal: DepositRefusal } & DecidedUnder)> {
  try {
    return await screenDeposit(input);
  } catch (err) {
    const cause = err instanceof ActivityFailure ? err.cause : err;
    if (!(cause instanceof ApplicationFailure && cause.type === DEPOSIT_ELIGIBILITY_UNAVAILABLE)) throw err;
    const versions = decidedUnder((cause.details?.[0] ?? {}) as DecidedUnder);
    return { verdict: 'refused', ...versions, refusal: { reason: 'eligibility_unavailable' } };
  }
}

/** Why the QR could not be created, when the provider said so or never answered; else undefined. */
function qrFailureReason(err: unknown): string | undefined {
  if (!isLocalActivityFailure(err)) return undefined;
  const cause = err instanceof ActivityFailure ? err.cause : err;
  return (cause instanceof ApplicationFailure ? cause.type : undefined) ?? 'provider_unavailable';
}
