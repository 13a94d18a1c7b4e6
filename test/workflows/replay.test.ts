import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { HISTORIES_DIR } from '../helpers/histories';

// Saved histories of every flow, replayed against the current workflow code: a change that
// breaks determinism (reordered commands, a removed activity, a new timer) fails here.
// Re-record after an intended, versioned change: RECORD_HISTORIES=1 npx vitest run test/workflows

const files = readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.history.pb'));

describe('replay of saved histories', () => {
  it('has a history of every flow', () => {
    for (const flow of ['onboarding', 'deposit', 'withdrawal']) {
      expect(
        files.some((f) => f.startsWith(flow)),
        flow,
      ).toBe(true);
    }
  });

  it('replays every one without nondeterminism', async () => {
    const histories = files.map((f) => ({
      workflowId: path.basename(f, '.history.pb'),
      history: temporal.api.history.v1.History.decode(readFileSync(path.join(HISTORIES_DIR, f))),
    }));
    const results = [];
    for await (const r of Worker.runReplayHistories(
      { workflowBundle: { code: inject('workflowBundle') } },
      histories,
    )) {
      results.push(r);
    }
    expect(results).toHaveLength(files.length);
    for (const r of results) expect(r.error, r.workflowId).toBeUndefined();
  });
});
