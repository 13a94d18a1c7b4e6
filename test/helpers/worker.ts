import { type Client, isGrpcServiceError } from '@temporalio/client';
import { type NativeConnection, Worker, type WorkerDeploymentOptions } from '@temporalio/worker';
import { inject } from 'vitest';
import { createActivities } from '../../activities';
import type { RescreeningSettings } from '../../activities/deps';
import type { PayoutAuthorizationSettings } from '../../activities/payout-authorization';
import type { ReconciliationSettings } from '../../activities/reconciliation';
import { screenPerson } from '../../activities/screen-person';
import { payoutControlsOf } from '../../activities/withdrawal-rules';
import { accountKeyHash, cpfHash } from '../../common/pii';
import { openSecret, sealSecret } from '../../common/secret-box';
import type { Connector, ConnectorRegistry } from '../../connectors/types';
import type { PayoutControls } from '../../contracts/rules';
import type { Pool } from '../../db/pool';
import type { EligibilityRegistry } from '../../eligibility/registry';
import type { Policy, PolicyReader } from '../../policy/schema';
import { staticPolicyReader } from '../../policy/seed';
import { bundleHash } from '../../worker/build-id';
import { deploymentOptions, type WorkerVersion } from '../../worker/versioning';
import { defaultPolicy, policyWith } from './policy';
import { testCodecKeys, testDataConverter } from './temporal';

/**
 * The run's in-process workers, every one of the run's workflow bundle: one version of a
 * deployment of their own, which a worker process started on the same server (worker/main.ts,
 * deployment `pixflow`) never takes new flows from.
 */
export const testVersion = (): WorkerVersion => ({
  deploymentName: 'pixflow-tests',
  buildId: `test+${bundleHash(inject('workflowBundle'))}`,
});

const GRPC_UNIMPLEMENTED = 12;

/**
 * Worker Versioning as production has it, with the run's version made current on the server
 * `client` talks to before the worker polls (allowed with no poller yet): a test's flows start
 * on it at once. The time-skipping server has no deployments, and runs any worker's tasks.
 */
export async function testDeploymentOptions(client: Client): Promise<WorkerDeploymentOptions> {
  const version = testVersion();
  const { namespace } = client.options;
  try {
    // Already current: a success that changes nothing.
    await client.workflowService.setWorkerDeploymentCurrentVersion({
      namespace,
      ...version,
      allowNoPollers: true,
      // Its task queues come as each test file's worker polls.
      ignoreMissingTaskQueues: true,
      identity: 'pixflow tests',
    });
  } catch (err) {
    if (!(isGrpcServiceError(err) && err.code === GRPC_UNIMPLEMENTED)) throw err;
  }
  return deploymentOptions(version);
}

/**
 * pixflow's real worker for a test: the run's workflow bundle, the real activities (provider
 * client against a sandbox, the run's Postgres), encrypted payloads as in production.
 */
export async function createTestWorker(opts: {
  connection: NativeConnection;
  taskQueue: string;
  provider: Connector;
  /** The connectors deposits are routed to; unset: `provider` alone. */
  collectors?: ConnectorRegistry;
  pool: Pool;
  piiKey: string;
  /** What the withdrawal's step-up starts biometric identifications with. */
  client: Client;
  /** The rules in force; unset: the default policy, version 1, with `rules` and `payoutControls`. */
  policy?: PolicyReader;
  /** The money rules; unset: the defaults. */
  rules?: MoneyRules;
  /** The payout controls; unset: the defaults. */
  payoutControls?: PayoutControls;
  /** The operator's payout authorization; unset: none. */
  payoutAuthorization?: PayoutAuthorizationSettings;
  /** Counts the payouts' deadline marks (the worker's metric). */
  countPayoutDeadline?: (mark: 'at_risk' | 'missed') => void;
  /** The reconciliation sweep's settings; unset: quick ones (the sweep runs only where a test starts it). */
  reconciliation?: ReconciliationSettings;
  /** The registry of impeded people onboardings ask; unset: none (not screened). */
  eligibility?: EligibilityRegistry;
  /** How the rescreening's batches run, asking `eligibility`; unset: a pass screens no one. */
  rescreening?: { activeDays: number; perSecond: number; freshMs: number };
}) {
  const policy = opts.policy ?? staticPolicyReader(testPolicyOf(opts));
  return Worker.create({
    connection: opts.connection,
    taskQueue: opts.taskQueue,
    workflowBundle: { code: inject('workflowBundle') },
    workerDeploymentOptions: await testDeploymentOptions(opts.client),
    dataConverter: testDataConverter,
    activities: createActivities({
      provider: opts.provider,
      ...(opts.collectors ? { collectors: opts.collectors } : {}),
      pool: opts.pool,
      clock: () => new Date(),
      hashCpf: (cpf) => cpfHash(cpf, opts.piiKey),
      hashAccount: (k) => accountKeyHash(k, opts.piiKey),
      policy,
      ...(opts.payoutAuthorization ? { payoutAuthorization: opts.payoutAuthorization } : {}),
      ...(opts.countPayoutDeadline ? { countPayoutDeadline: opts.countPayoutDeadline } : {}),
      temporal: { client: opts.client, taskQueue: opts.taskQueue },
      reconciliation: opts.reconciliation ?? testReconciliation,
      ...(opts.eligibility ? { eligibility: opts.eligibility } : {}),
      ...(opts.rescreening && opts.eligibility
        ? { rescreening: testRescreening(opts.rescreening, opts.eligibility, opts.pool, opts.piiKey, policy) }
        : {}),
      sealCpf: (cpf) => sealSecret(testCodecKeys, cpf),
      openCpf: (sealed) => openSecret(testCodecKeys, sealed),
    }),
  });
}

/** The rescreening as the worker builds it (worker/activities.ts), on the test's codec keys. */
function testRescreening(
  r: { perSecond: number },
  registry: EligibilityRegistry,
  pool: Pool,
  piiKey: string,
  policy: PolicyReader,
): RescreeningSettings {
  const sealCpf = (cpf: string) => sealSecret(testCodecKeys, cpf);
  return {
    perSecond: r.perSecond,
    screen: (cpf) =>
      screenPerson(
        { registry, pool, hashCpf: (c) => cpfHash(c, piiKey), policy, sealCpf },
        cpf,
        'rescreening',
      ),
  };
}

/** A quick sweep: a flow is due a second after it started waiting, then every second. */
export const testReconciliation: ReconciliationSettings = {
  scheduleMs: [1_000],
  maxPerSecond: 50,
  intervalMs: 500,
};

/** The money rules as the workflow tests name them: the policy's deposits and withdrawals. */
export interface MoneyRules {
  requireVerifiedForWithdrawals: boolean;
  requireVerifiedForDeposits: boolean;
  requireOwnPayeeAccount: boolean;
  stepUpAboveCentavos: number;
  stepUpNewAccount: boolean;
  dailyLimitCentavos: number;
  kycMaxAgeMs: number;
  holdThirdPartyDeposits: boolean;
}

/** The money rules as an unconfigured deployment has them. */
export const defaultRules = (): MoneyRules => {
  const { deposits: d, withdrawals: w } = defaultPolicy();
  return {
    requireVerifiedForWithdrawals: w.requireVerified,
    requireVerifiedForDeposits: d.requireVerified,
    requireOwnPayeeAccount: w.requireOwnPayeeAccount,
    stepUpAboveCentavos: w.stepUpAboveCentavos,
    stepUpNewAccount: w.stepUpNewAccount,
    dailyLimitCentavos: w.dailyLimitCentavos,
    kycMaxAgeMs: w.kycMaxAgeMs,
    holdThirdPartyDeposits: d.holdThirdParty,
  };
};

/** The worker's policy: the default, with the test's rules, controls and rescreening on it. */
function testPolicyOf(o: {
  rules?: MoneyRules;
  payoutControls?: PayoutControls;
  rescreening?: { activeDays: number; freshMs: number };
}): Policy {
  const r = o.rules;
  const c = o.payoutControls;
  return policyWith({
    ...(r
      ? {
          deposits: {
            requireVerified: r.requireVerifiedForDeposits,
            holdThirdParty: r.holdThirdPartyDeposits,
          },
          withdrawals: {
            requireVerified: r.requireVerifiedForWithdrawals,
            requireOwnPayeeAccount: r.requireOwnPayeeAccount,
            dailyLimitCentavos: r.dailyLimitCentavos,
            stepUpAboveCentavos: r.stepUpAboveCentavos,
            stepUpNewAccount: r.stepUpNewAccount,
            kycMaxAgeMs: r.kycMaxAgeMs,
          },
        }
      : {}),
    ...(c
      ? {
          payouts: {
            deadlineMs: c.deadlineMs,
            atRiskShare: c.atRiskShare,
            approvalAboveCentavos: c.approvalAboveCentavos,
            approvers: c.approvers,
          },
        }
      : {}),
    ...(o.rescreening
      ? { eligibility: { rescreenActiveDays: o.rescreening.activeDays, freshMs: o.rescreening.freshMs } }
      : {}),
  });
}

/** The payout controls as an unconfigured deployment has them (no authorization asked). */
export const defaultPayoutControls = (): PayoutControls => payoutControlsOf(defaultPolicy(), false);
