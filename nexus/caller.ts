import { createNexusServiceClient, type WorkflowInterceptorsFactory } from '@temporalio/workflow';
import {
  PIXFLOW_API_KEY_HEADER,
  PIXFLOW_BRAND_HEADER,
  PIXFLOW_NEXUS_ENDPOINT,
  pixflowService,
} from './service';

// What a caller's workflow uses to call pixflow with its API key: the SDK's workflow-side Nexus
// client takes no headers, so the key reaches the operation's `pixflow-api-key` header through a
// workflow interceptor, this module's `interceptors`, which the caller's worker registers
// (`interceptors: { workflowModules: [require.resolve('<pixflow>/nexus/caller')] }`). The key is
// this workflow's own: each workflow run has its own instance of this module. Bundled into the
// caller's workflows with nexus/service.ts and nothing else of pixflow.

let apiKey: string | undefined;
let actingBrand: string | undefined;

/**
 * The Nexus client for pixflow's service, whose operations present `key` (a pixflow API key with
 * the scopes the operations need) and, for a platform key, the `brand` they act for. The key is
 * written into this workflow's history, in the operations' headers: docs/nexus.md says who can
 * read it there.
 */
export function pixflowNexusClient(key: string, endpoint = PIXFLOW_NEXUS_ENDPOINT, brand?: string) {
  apiKey = key;
  actingBrand = brand;
  return createNexusServiceClient({ service: pixflowService, endpoint });
}

/** Sets the key (and brand) headers on this workflow's pixflow operations (and on nothing else). */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  outbound: [
    {
      async startNexusOperation(input, next) {
        if (input.service !== pixflowService.name || apiKey === undefined) return next(input);
        const headers = {
          ...input.headers,
          [PIXFLOW_API_KEY_HEADER]: apiKey,
          ...(actingBrand === undefined ? {} : { [PIXFLOW_BRAND_HEADER]: actingBrand }),
        };
        return next({ ...input, headers });
      },
    },
  ],
});
