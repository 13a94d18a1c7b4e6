import { type WorkflowInterceptorsFactory, workflowInfo } from '@temporalio/workflow';
import { withPublicPart } from '../common/payload-converter';
import { outcomeOfWorkflow } from './outcomes';

// A workflow interceptor in the worker's bundle: a flow's final state (its run's result, which
// Nexus hands the caller that waits on it) goes with its outcome in the clear and the whole state
// sealed beside it (common/payload-converter.ts). pixflow's own clients read the whole state as
// before; a caller's workflow, without pixflow's key, reads the outcome (nexus/outcomes.ts).

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      async execute(input, next) {
        const result = await next(input);
        if (result === null || typeof result !== 'object') return result;
        const outcome = outcomeOfWorkflow(workflowInfo().workflowType, result);
        return outcome ? withPublicPart(result, outcome) : result;
      },
    },
  ],
});
