import {
  type LivenessRequestFlow,
  recordLivenessAnswer,
  recordLivenessRequest,
} from '../db/liveness-requests';
import type { ActivityDeps } from './deps';
import { providerCall } from './errors';

// The liveness requests the flows make are recorded, so the webhook ingress can tell a callback
// that answers one of them from one that answers nothing pixflow asked for.

/**
 * One liveness request to the provider, recorded around the call: its correlation_id before (a
 * callback may come before the answer does), the provider's transaction_id after. Both writes are
 * idempotent, so a retried activity records the same request.
 */
export async function requestRecorded<R extends { transaction_id: string }>(
  { pool, clock }: Pick<ActivityDeps, 'pool' | 'clock'>,
  request: { correlationId: string; workflowId: string; flow: LivenessRequestFlow; cpfHash: string },
  call: () => Promise<R>,
): Promise<R> {
  await recordLivenessRequest(pool, {
    correlationId: request.correlationId,
    workflowId: request.workflowId,
    flow: request.flow,
    cpfHash: request.cpfHash,
    requestedAt: clock(),
  });
  const res = await providerCall(call);
  if (res.transaction_id) {
    await recordLivenessAnswer(pool, {
      correlationId: request.correlationId,
      transactionId: res.transaction_id,
      answeredAt: clock(),
    });
  }
  return res;
}
