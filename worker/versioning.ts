import { type Client, isGrpcServiceError } from '@temporalio/client';
import type { WorkerDeploymentOptions } from '@temporalio/worker';
import type { Logger } from '../common/logger';

// Worker Versioning: every worker belongs to a Worker Deployment and says which build of the
// workflow code it runs. Pinned flows (deposits, withdrawals, biometric identifications) run to
// their end on their build's workers; the long-lived ones (onboarding, a held deposit, the
// reconciler, the rescreening) move to the deployment's current build at their next workflow task
// (docs/versioning.md).

/** A Worker Deployment Version: the deployment, and the build of the code. */
export interface WorkerVersion {
  deploymentName: string;
  buildId: string;
}

/**
 * The worker's deployment options. A workflow that declares no behavior is pinned: each of
 * pixflow's declares its own (setWorkflowOptions), and a new one should too.
 */
export function deploymentOptions(version: WorkerVersion): WorkerDeploymentOptions {
  return { useWorkerVersioning: true, version, defaultVersioningBehavior: 'PINNED' };
}

const GRPC_NOT_FOUND = 5;
const GRPC_FAILED_PRECONDITION = 9;
const GRPC_UNIMPLEMENTED = 12;

/** What became of the worker's build in its deployment. */
export type Promotion =
  /** It is the current version: new flows start on it. */
  | 'current'
  /** A newer build was registered: this one runs its own pinned flows and leaves new ones to it. */
  | 'newer-exists'
  /** Someone else manages the deployment's versions (its manager identity): promotions are theirs. */
  | 'managed-elsewhere'
  /** The server has no Worker Deployments (the time-skipping test server): nothing to do. */
  | 'unsupported';

/** Seconds and nanoseconds of a protobuf Timestamp, as one comparable number (ms). */
const msOf = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
  Number(String(t?.seconds ?? 0)) * 1000 + (t?.nanos ?? 0) / 1e6;

type Step = { done: Promotion } | { promote: Uint8Array | null | undefined } | { wait: string };

/**
 * Whether the deployment exists: the server creates it when its first worker polls. Listed
 * rather than described, which the server logs as an error while it does not exist.
 */
async function deploymentExists(client: Client, namespace: string, name: string): Promise<boolean> {
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.listWorkerDeployments({
      namespace,
      pageSize: 100,
      nextPageToken,
    });
    if (page.workerDeployments.some((d) => d.name === name)) return true;
    nextPageToken = page.nextPageToken?.length ? page.nextPageToken : undefined;
  } while (nextPageToken);
  return false;
}

/** One look at the deployment: whether this build is current, must become it, or must not. */
async function nextStep(client: Client, namespace: string, v: WorkerVersion): Promise<Step> {
  const identity = client.options.identity;
  const { workerDeploymentInfo: info, conflictToken } = await client.workflowService.describeWorkerDeployment(
    {
      namespace,
      deploymentName: v.deploymentName,
    },
  );
  const versions = info?.versionSummaries ?? [];
  const ours = versions.find((s) => s.deploymentVersion?.buildId === v.buildId);
  // The server registers a version when its first worker polls: a moment after the worker starts.
  if (!ours) return { wait: 'this build is not registered yet' };
  if (info?.routingConfig?.currentDeploymentVersion?.buildId === v.buildId) return { done: 'current' };
  if (info?.managerIdentity && info.managerIdentity !== identity) return { done: 'managed-elsewhere' };
  const newer = versions.some((s) => s !== ours && msOf(s.createTime) > msOf(ours.createTime));
  return newer ? { done: 'newer-exists' } : { promote: conflictToken };
}

/**
 * Makes this worker's build the deployment's current version when it is the newest one
 * registered: a new release takes the new flows as soon as its first worker polls, while a
 * worker of an older build (restarted during a roll-out) does not take them back. Asks again
 * every `retryMs` until it knows, or `stopped()`. Undefined when stopped first.
 */
export async function promoteWhenNewest(
  client: Client,
  namespace: string,
  version: WorkerVersion,
  opts: { log: Logger; retryMs: number; stopped: () => boolean },
): Promise<Promotion | undefined> {
  const { log } = opts;
  let exists = false;
  for (let attempt = 1; !opts.stopped(); attempt++) {
    try {
      exists ||= await deploymentExists(client, namespace, version.deploymentName);
      const step = exists ? await nextStep(client, namespace, version) : { wait: 'no deployment yet' };
      if ('done' in step) {
        log.info({ ...version, promotion: step.done }, 'worker deployment version');
        return step.done;
      }
      if ('promote' in step) {
        await client.workflowService.setWorkerDeploymentCurrentVersion({
          namespace,
          deploymentName: version.deploymentName,
          buildId: version.buildId,
          // Refused if another worker changed the deployment since the look: look again.
          conflictToken: step.promote,
          identity: client.options.identity,
        });
        log.info(version, 'this build is now the current version of its worker deployment');
        return 'current';
      }
      log.debug({ ...version, why: step.wait }, 'waiting to promote this build');
    } catch (err) {
      if (isGrpcServiceError(err) && err.code === GRPC_UNIMPLEMENTED) return 'unsupported';
      // No deployment yet (this worker's first poll creates it), or another worker changed it
      // since the look (two of a new build start together): look again, and say so if it lasts.
      const expected =
        isGrpcServiceError(err) && [GRPC_NOT_FOUND, GRPC_FAILED_PRECONDITION].includes(err.code);
      log[expected && attempt < 20 ? 'debug' : 'warn'](
        { ...version, err: String(err) },
        'could not promote this build yet; asking again',
      );
    }
    await new Promise((r) => setTimeout(r, opts.retryMs));
  }
  return undefined;
}
