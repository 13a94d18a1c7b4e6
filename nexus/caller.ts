import { createNexusServiceClient, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import { PIXFLOW_API_KEY_HEADER, PIXFLOW_NEXUS_ENDPOINT, pixflowService } from './service';

// What a caller's workflow uses to call pixflow with its API key: the SDK's workflow-side Nexus
// client takes no headers, so the key reaches the operation's `pixflow-api-key` header through a
// workflow interceptor, this module's `interceptors`, which the caller's worker registers
// (`interceptors: { workflowModules: [require.resolve('<pixflow>/nexus/caller')] }`). The key is
// this workflow's own: each workflow run has its own instance of this module. Bundled into the
// caller's workflows with nexus/service.ts and nothing else of pixflow.

let apiKey: string | undefined;

/**
 * The Nexus client for pixflow's service, whose operations present `key` (a pixflow API key with
 * the scopes the operations need). The key is written into this workflow's history, in the
 * operations' headers: docs/nexus.md says who can read it there.
 */
export function pixflowNexusClient(key: string, endpoint = PIXFLOW_NEXUS_ENDPOINT) {
  apiKey = key;
  return createNexusServiceClient({ service: pixflowService, endpoint });
}

/** Sets the key header on this workflow's pixflow operations (and on nothing else). */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      async startNexusOperation(input, next) {
        if (input.service !== pixflowService.name || apiKey === undefined) return next(input);
        return next({ ...input, headers: { ...input.headers, [PIXFLOW_API_KEY_HEADER]: apiKey } });
      },
    },
  ],
});
