import { createHash } from 'node:crypto';
import { bundleWorkflowCode, Runtime } from '@temporalio/worker';

// The worker's build id is written into every workflow task's completion in history. The SDK's
// default names the SDK and a full SHA-256 of the bundle (about 90 bytes, in each of a deposit's
// 5 and a withdrawal's 8 workflow tasks); a short hash of the same bundle still tells one build
// of the workflow code from another (the Temporal UI shows it; a reset can name it).
export function buildIdOf(bundleCode: string): string {
  return `pixflow+${createHash('sha256').update(bundleCode).digest('hex').slice(0, 12)}`;
}

/** The workflow bundle the worker runs, and its build id. */
export async function workflowBundleWithBuildId(workflowsPath: string) {
  // The runtime's logger, as when the worker bundles the code itself.
  const { code } = await bundleWorkflowCode({ workflowsPath, logger: Runtime.instance().logger });
  return { workflowBundle: { code }, buildId: buildIdOf(code) };
}
