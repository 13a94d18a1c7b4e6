import { createHash } from 'node:crypto';
import type { Client } from '@temporalio/client';
import * as temporalNexus from '@temporalio/nexus';
import * as nexus from 'nexus-rpc';
import { type BrandMoneyDoor, brandMoneyDoor } from '../api-keys/acting-brand';
import { keyDirectory } from '../api-keys/directory';
import type { Scope } from '../common/api-key';
import type { Config } from '../common/config';
import { createLogger } from '../common/logger';
import { inTheClear } from '../common/payload-converter';
import { cpfHash } from '../common/pii';
import { depositWorkflowId } from '../contracts/deposit';
import type { OnboardingInput } from '../contracts/onboarding';
import { onboardingWorkflowId } from '../contracts/onboarding';
import { withdrawalWorkflowId } from '../contracts/withdrawal';
import { withdrawalInputSchema } from '../contracts/withdrawal-input';
import { knowsCustomer, meetCustomer } from '../db/customer-brands';
import type { Pool } from '../db/pool';
import { parse } from '../http/request-input';
import { type DepositStartResult, describeDepositRefusal, startDeposit } from '../starters/deposit';
import { onboardingStart, startOnboardingOnce } from '../starters/onboarding';
import { onboardingRequestSchema, withdrawalRequestOf, withdrawalRequestSchema } from '../starters/requests';
import { configuredTimings, type StarterDeps } from '../starters/types';
import { startWithdrawal, WITHDRAWAL_REFUSED_TYPE } from '../starters/withdrawal';
import { isAlreadyStarted, isNotFound } from '../starters/workflow-calls';
import { type NexusAuth, nexusAuth } from './auth';
import { answering, conflictError, flowNotFoundError, refusalError, refused } from './errors';
import { type FlowRefInput, flowRefSchema, parseDepositInput } from './inputs';
import {
  type FlowOutcome,
  type OnboardingOutcome,
  onboardingOutcome,
  outcomeOfWorkflow,
  type WithdrawalOutcome,
  withdrawalOutcome,
} from './outcomes';
import { type FlowRef, type OnboardingRequest, pixflowService, type WithdrawalRequest } from './service';

// The Nexus service's handlers, run by pixflow's worker. Each checks its caller's API key and
// scopes as the API route it stands for does (nexus/auth.ts), then starts its flow through the
// same starter the API calls (starters/), with its rules: what the API refuses, the operation
// refuses, with the same type and details (nexus/errors.ts). The
// asynchronous operations are backed by the flows' own runs: the Temporal server calls the
// caller back when the run ends, with its outcome (nexus/outcomes.ts): the flow's result, whose
// outcome part crosses in the clear (nexus/outcome-interceptor.ts). What the handlers answer
// themselves is marked `inTheClear`: a caller reads it with no pixflow key.

/** A flow's workflow, as Nexus starts it: its input; its result, as a caller reads it, the outcome. */
type FlowWorkflow<I, O> = (input: I) => Promise<O>;
/** A running flow's workflow, as Nexus joins it: its outcome (it is never started here). */
type JoinedWorkflow<O> = () => Promise<O>;

/** What an asynchronous operation answers: the flow's outcome now, or its run to wait for. */
type Outcome<O> = { ended: O } | { run: temporalNexus.WorkflowHandle<O> };

/**
 * An operation backed by a flow's run: the server calls the caller back when it ends. A flow
 * that had ended answers at once. A caller never cancels a flow: money may be on its way.
 */
function flowRunOperation<I, O extends object>(
  begin: (ctx: nexus.StartOperationContext, input: I) => Promise<Outcome<O>>,
): nexus.OperationHandler<I, O> {
  return {
    async start(ctx, input) {
      const outcome = await answering(() => begin(ctx, input));
      if ('ended' in outcome) return nexus.HandlerStartOperationResult.sync(inTheClear(outcome.ended));
      return new temporalNexus.WorkflowRunOperationHandler<I, O>(async () => outcome.run).start(ctx, input);
    },
    async cancel() {
      throw new nexus.HandlerError(
        'NOT_IMPLEMENTED',
        "pixflow's flows are not canceled by a caller (money may be on its way): stop waiting with cancellationType ABANDON",
      );
    },
  };
}

/** The outcome of a flow whose run has ended (following its continue-as-new), from its final state. */
async function endedOutcome<O extends FlowOutcome>(client: Client, workflowId: string): Promise<O> {
  const handle = client.workflow.getHandle(workflowId);
  // pixflow's client reads the whole final state; the last run's type says which flow's it is.
  const [state, { type }] = await Promise.all([handle.result(), handle.describe()]);
  const outcome = outcomeOfWorkflow(type, state);
  if (!outcome) throw new Error(`${workflowId} is a ${type}, not a flow`);
  return outcome as O;
}

/**
 * Joins a running flow: the server attaches this operation's callback to its run. Never starts
 * one (USE_EXISTING joins the running run; REJECT_DUPLICATE refuses a closed id): a flow that
 * ended meanwhile answers its final state.
 */
async function join<O extends FlowOutcome>(
  ctx: nexus.StartOperationContext,
  client: Client,
  workflowType: string,
  workflowId: string,
): Promise<Outcome<O>> {
  try {
    const run = await temporalNexus.startWorkflow<JoinedWorkflow<O>>(ctx, workflowType, {
      workflowId,
      workflowIdConflictPolicy: 'USE_EXISTING',
      workflowIdReusePolicy: 'REJECT_DUPLICATE',
    });
    return { run };
  } catch (err) {
    if (!isAlreadyStarted(err)) throw err;
    return { ended: await endedOutcome<O>(client, workflowId) };
  }
}

/**
 * The scopes of the API route each operation stands for (its `scopes` in api/*.ts;
 * test/unit/starters.test.ts checks they agree).
 */
export const SCOPES = {
  startOnboarding: ['onboardings:write'],
  createDeposit: ['deposits:write'],
  requestWithdrawal: ['withdrawals:write'],
  onboardingState: ['onboardings:read'],
  depositState: ['deposits:read'],
  withdrawalState: ['withdrawals:read'],
} as const satisfies Record<string, readonly Scope[]>;

/**
 * 32 digits from the operation's request id, which the caller's server keeps across retries: a
 * deposit asked without a txid is the same deposit when the operation is asked again.
 */
export const txidOfRequest = (requestId: string) =>
  BigInt(`0x${createHash('sha256').update(requestId).digest('hex')}`)
    .toString()
    .slice(0, 32);

/** A payout asked without a transactionId: the same payout when the operation is asked again. */
export const transactionIdOfRequest = (requestId: string) => `nexus-${requestId}`;

/** The flow a reference names: a deposit or a withdrawal the acting brand's (an onboarding is the person's). */
function workflowIdOf(
  config: Config,
  ref: FlowRefInput,
  brand: string,
): { workflowId: string; what: string; scopes: readonly Scope[] } {
  switch (ref.flow) {
    case 'onboarding':
      return {
        workflowId: onboardingWorkflowId(cpfHash(ref.cpf, config.PII_HASH_KEY)),
        what: 'onboarding for this CPF',
        scopes: SCOPES.onboardingState,
      };
    case 'deposit':
      return {
        workflowId: depositWorkflowId(ref.txid, brand),
        what: 'deposit with this txid',
        scopes: SCOPES.depositState,
      };
    case 'withdrawal':
      return {
        workflowId: withdrawalWorkflowId(ref.transactionId, brand),
        what: 'withdrawal with this transactionId',
        scopes: SCOPES.withdrawalState,
      };
  }
}

/** A person the brand has not met is, to it, a CPF with no onboarding (docs/brands.md, "People a brand knows"). */
async function refuseUnmetPerson(pool: Pool, config: Config, ref: FlowRefInput, brand: string, what: string) {
  if (ref.flow !== 'onboarding') return;
  if (!(await knowsCustomer(pool, cpfHash(ref.cpf, config.PII_HASH_KEY), brand)))
    throw flowNotFoundError(what);
}

/** A flow's final state: now if its run has ended, else its run to join. */
async function outcomeOf(
  ctx: nexus.StartOperationContext,
  temporal: Client,
  workflowId: string,
  what: string,
): Promise<Outcome<FlowOutcome>> {
  let running: { type: string } | undefined;
  try {
    const { type, status } = await temporal.workflow.getHandle(workflowId).describe();
    running = status.name === 'RUNNING' ? { type } : undefined;
  } catch (err) {
    if (isNotFound(err)) throw flowNotFoundError(what);
    throw err;
  }
  if (!running) return { ended: await endedOutcome<FlowOutcome>(temporal, workflowId) };
  return join<FlowOutcome>(ctx, temporal, running.type, workflowId);
}

/** What createDeposit answers for a deposit started (or found), or the refusal it throws. */
function depositCreated(started: DepositStartResult) {
  switch (started.outcome) {
    case 'conflict':
      throw conflictError(started.reason);
    case 'failed':
      throw refused('deposit-failed', `The provider refused the deposit: ${started.reason}`, {});
    case 'refused':
      throw refusalError(started, describeDepositRefusal(started.details));
  }
  const { workflowId, answer } = started;
  // The QR and ids: nothing personal.
  return inTheClear({
    workflowId,
    txid: answer.txid,
    qr: answer.qr,
    created: started.outcome === 'started',
  });
}

export interface NexusDeps {
  config: Config;
  pool: Pool;
  /** Who may call; by default the API's keys: API_KEYS as the worker has them, and the key records. */
  auth?: NexusAuth;
}

/** The API's keys, read as the API reads them: API_KEYS, and the records through the same cache. */
function defaultAuth(config: Config, pool: Pool): NexusAuth {
  const log = createLogger('nexus', config.LOG_LEVEL);
  return nexusAuth({
    bootstrapKeys: config.API_KEYS ?? [],
    directory: keyDirectory(pool, { ttlMs: config.API_KEY_CACHE_MS, log }),
    log,
  });
}

/** The worker's own client for an operation (its connection, namespace and payload codec), and the brand's merchant. */
const startersOf =
  (config: Config, timings: StarterDeps['timings'], door: BrandMoneyDoor) => (): StarterDeps => ({
    config,
    temporal: temporalNexus.getClient(),
    timings,
    brandMerchant: door.merchantOf,
  });

/** pixflow's Nexus service as the worker serves it (Worker.create's `nexusServices`). */
export function pixflowNexusService({ config, pool, auth = defaultAuth(config, pool) }: NexusDeps) {
  const timings = configuredTimings(config, undefined);
  /** The caller with its scopes checked, and the brand it acts for. */
  const brandCaller = async (ctx: nexus.OperationContext, scopes: readonly Scope[]) => {
    const principal = await auth.authenticate(ctx);
    auth.requireScopes(ctx, principal, scopes);
    return auth.brandOf(ctx, principal);
  };
  // The brand's accounts as the API's door reads them: a brand without one for the flow starts nothing.
  const door = brandMoneyDoor(pool, { ttlMs: config.API_KEY_CACHE_MS });
  const starter = startersOf(config, timings, door);

  return nexus.serviceHandler(pixflowService, {
    startOnboarding: flowRunOperation<OnboardingRequest, OnboardingOutcome>(async (ctx, raw) => {
      const brand = await brandCaller(ctx, SCOPES.startOnboarding);
      const { temporal } = starter();
      const input: OnboardingInput = {
        ...parse(onboardingRequestSchema, 'input', raw),
        ...(timings ? { timings } : {}),
      };
      // The brand meets the person, as POST /v1/onboardings does (docs/brands.md, "People a brand knows").
      await meetCustomer(pool, cpfHash(input.cpf, config.PII_HASH_KEY), brand);
      // A running onboarding is joined (USE_EXISTING) where the API answers its state: either way
      // the caller has its end.
      const outcome = await startOnboardingOnce(temporal, config, input, (reuse) =>
        temporalNexus.startWorkflow<FlowWorkflow<OnboardingInput, OnboardingOutcome>>(
          ctx,
          'onboardingWorkflow',
          {
            ...onboardingStart(config, input),
            workflowIdConflictPolicy: 'USE_EXISTING',
            workflowIdReusePolicy: reuse,
          },
        ),
      );
      return 'started' in outcome ? { run: outcome.started } : { ended: onboardingOutcome(outcome.existing) };
    }),

    createDeposit: async (ctx, raw) =>
      answering(async () => {
        const brand = await brandCaller(ctx, SCOPES.createDeposit);
        const body = parseDepositInput(raw);
        await door.refuseWithoutAccount(brand, 'deposit');
        const started = await startDeposit(
          starter(),
          { ...body, txid: body.txid ?? txidOfRequest(ctx.requestId) },
          ctx.requestId,
          brand,
        );
        return depositCreated(started);
      }),

    requestWithdrawal: flowRunOperation<WithdrawalRequest, WithdrawalOutcome>(async (ctx, raw) => {
      const brand = await brandCaller(ctx, SCOPES.requestWithdrawal);
      const deps = starter();
      const body = parse(withdrawalRequestSchema, 'input', raw);
      const request = parse(
        withdrawalInputSchema,
        'input',
        withdrawalRequestOf(config, body, transactionIdOfRequest(ctx.requestId)),
      );
      await door.refuseWithoutAccount(brand, 'withdrawal');
      const started = await startWithdrawal(deps, request, brand);
      if (started.outcome === 'conflict') throw conflictError(started.reason);
      if (started.outcome === 'refused') {
        throw refusalError(started, {
          type: WITHDRAWAL_REFUSED_TYPE,
          title: 'The rules refused the withdrawal',
          detail: `the money rules refused the withdrawal (${started.reason}): nothing was sent`,
          fields: withdrawalOutcome(started.details),
        });
      }
      const { workflowId } = started;
      if (started.outcome === 'attached' && started.closed) {
        return { ended: await endedOutcome<WithdrawalOutcome>(deps.temporal, workflowId) };
      }
      return join<WithdrawalOutcome>(ctx, deps.temporal, 'withdrawalWorkflow', workflowId);
    }),

    waitForOutcome: flowRunOperation<FlowRef, FlowOutcome>(async (ctx, raw) => {
      // Which read scope depends on the flow asked for: the key first, then the input, then the scope.
      const principal = await auth.authenticate(ctx);
      const ref = parse(flowRefSchema, 'input', raw);
      const brand = await auth.brandOf(ctx, principal);
      const { workflowId, what, scopes } = workflowIdOf(config, ref, brand);
      auth.requireScopes(ctx, principal, scopes);
      await refuseUnmetPerson(pool, config, ref, brand, what);
      return outcomeOf(ctx, starter().temporal, workflowId, what);
    }),
  });
}
