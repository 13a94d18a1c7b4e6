import type { LivenessRequest, LivenessSession } from '../connectors/types';
import {
  type LivenessRequestFlow,
  recordLivenessAnswer,
  recordLivenessRequest,
} from '../db/liveness-requests';
import type { ActivityDeps } from './deps';
import { providerCall, unclassifiedNotice } from './errors';

// The liveness requests the flows make are recorded, so the webhook ingress can tell a callback
// that answers one of them from one that answers nothing pixflow asked for.

/** What asking the provider for a liveness link needs of an activity's deps. */
export type LivenessRequestDeps = Pick<
  ActivityDeps,
  'provider' | 'pool' | 'hashCpf' | 'clock' | 'countUnclassified'
>;

/**
 * One liveness request to the provider for `flow`, recorded around the call: its correlation_id
 * before (a callback may come before the answer does), the provider's transaction_id after. Both
 * writes are idempotent, so a retried activity records the same request.
 */
export async function requestLivenessRecorded(
  { provider, pool, hashCpf, clock, countUnclassified }: LivenessRequestDeps,
  request: LivenessRequest & { flow: LivenessRequestFlow; workflowId: string; cpf: string },
): Promise<LivenessSession> {
  await recordLivenessRequest(pool, {
    correlationId: request.correlationId,
    workflowId: request.workflowId,
    flow: request.flow,
    cpfHash: hashCpf(request.cpf),
    requestedAt: clock(),
  });
  const res = await providerCall(
    () =>
      provider.startLiveness(request.cpf, {
        correlationId: request.correlationId,
        plan: request.plan,
        event: request.event,
        redirectUrl: request.redirectUrl,
      }),
    unclassifiedNotice({ pool, countUnclassified }),
  );
  if (res.transactionId) {
    await recordLivenessAnswer(pool, {
      correlationId: request.correlationId,
      transactionId: res.transactionId,
      answeredAt: clock(),
    });
  }
  return res;
}
