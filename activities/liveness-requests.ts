import type { StartLivenessInput } from '../connectors/identity-payments/client';
import type { LivenessResponse } from '../connectors/identity-payments/wire/schemas';
import {
  type LivenessRequestFlow,
  recordLivenessAnswer,
  recordLivenessRequest,
} from '../db/liveness-requests';
import type { ActivityDeps } from './deps';
import { providerCall } from './errors';

// The liveness requests the flows make are recorded, so the webhook ingress can tell a callback
// that answers one of them from one that answers nothing pixflow asked for.

/** What asking the provider for a liveness link needs of an activity's deps. */
export type LivenessRequestDeps = Pick<ActivityDeps, 'provider' | 'pool' | 'hashCpf' | 'clock'>;

/**
 * One liveness request to the provider for `flow`, recorded around the call: its correlation_id
 * before (a callback may come before the answer does), the provider's transaction_id after. Both
 * writes are idempotent, so a retried activity records the same request.
 */
export async function requestLivenessRecorded(
  { provider, pool, hashCpf, clock }: LivenessRequestDeps,
  request: StartLivenessInput & { flow: LivenessRequestFlow; workflowId: string; cpf: string },
): Promise<LivenessResponse> {
  await recordLivenessRequest(pool, {
    correlationId: request.correlationId,
    workflowId: request.workflowId,
    flow: request.flow,
    cpfHash: hashCpf(request.cpf),
    requestedAt: clock(),
  });
  const res = await providerCall(() =>
    provider.startLiveness(request.cpf, {
      correlationId: request.correlationId,
      plan: request.plan,
      event: request.event,
      redirectUrl: request.redirectUrl,
    }),
  );
  if (res.transaction_id) {
    await recordLivenessAnswer(pool, {
      correlationId: request.correlationId,
      transactionId: res.transaction_id,
      answeredAt: clock(),
    });
  }
  return res;
}
