import { FLOOR_QUEUE } from './settings';
import { runBenchWorker, tellBench } from './worker-process';

// The floor's worker, a process of its own as pixflow's worker is: the floor workflows and the
// signal sinks on task queue `bench-floor`. It tells the bench when each floor workflow ran its
// last activity.

runBenchWorker('floor worker', async () => ({
  taskQueue: FLOOR_QUEUE,
  workflowsPath: require.resolve('./floor-workflow'),
  activities: {
    async noop() {},
    async done(id: string) {
      tellBench({ done: id, at: Date.now() });
    },
  },
}));
