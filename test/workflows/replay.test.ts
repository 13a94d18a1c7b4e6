import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { EncryptionCodec } from '../../common/codec';
import * as workflows from '../../workflows';
import { HISTORIES_DIR } from '../helpers/histories';
import { expectSdkLog, settleSdkLogs } from '../helpers/sdk-log';
import { testCodecKeys } from '../helpers/temporal';

// Saved histories of every flow, replayed against the current workflow code: a change that
// breaks determinism (reordered commands, a removed activity, a new timer) fails here.
// docs/versioning.md says when and how to record new ones (RECORD_HISTORIES=1).

const codec = new EncryptionCodec(testCodecKeys);

/**
 * Histories hold payloads as the server keeps them: encrypted. The replayer does not run the
 * codec, so every encrypted payload is opened first (a walk over the history's objects).
 */
async function decrypted<T extends object>(node: T): Promise<T> {
  for (const [key, value] of Object.entries(node)) {
    if (!value || typeof value !== 'object' || ArrayBuffer.isView(value)) continue;
    const meta = (value as { metadata?: Record<string, Uint8Array> }).metadata;
    if (meta?.encoding && Buffer.from(meta.encoding).toString() === 'binary/encrypted') {
      const [open] = await codec.decode([value as Payload]);
      (node as Record<string, unknown>)[key] = open;
    } else {
      await decrypted(value);
    }
  }
  return node;
}

const files = readdirSync(HISTORIES_DIR).filter((f) => f.endsWith('.history.pb'));
const { EventType } = temporal.api.enums.v1;

/** Every saved history, opened, named by its file. */
const histories = () =>
  Promise.all(
    files.map(async (f) => ({
      workflowId: path.basename(f, '.history.pb'),
      history: await decrypted(
        temporal.api.history.v1.History.decode(readFileSync(path.join(HISTORIES_DIR, f))),
      ),
    })),
  );

async function replay(all: Awaited<ReturnType<typeof histories>>) {
  const results = [];
  for await (const r of Worker.runReplayHistories(
    { workflowBundle: { code: inject('workflowBundle') } },
    all,
  )) {
    results.push(r);
  }
  return results;
}

describe('replay of saved histories', () => {
  it('has a history of every workflow the worker runs', async () => {
    const types = new Set(
      (await histories()).map(
        (h) => h.history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowType?.name,
      ),
    );
    expect([...types].sort()).toEqual(Object.keys(workflows).sort());
  });

  it('replays every one without nondeterminism', async () => {
    const results = await replay(await histories());
    expect(results).toHaveLength(files.length);
    for (const r of results) expect(r.error, r.workflowId).toBeUndefined();
  });

  it('fails a history whose commands come in another order than the code gives them', async () => {
    // A payout's history with its payout sent before its deadline was watched.
    const [payout] = (await histories()).filter((h) => h.workflowId === 'withdrawal-reconciliation-hint');
    const events = [...(payout?.history.events ?? [])];
    const timer = events.findIndex((e) => e.eventType === EventType.EVENT_TYPE_TIMER_STARTED);
    const sent = events[timer + 1];
    expect(sent?.eventType).toBe(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED);
    const started = events[timer] as (typeof events)[number];
    events[timer + 1] = { ...started, eventId: sent?.eventId };
    events[timer] = { ...sent, eventId: started.eventId };
    const altered = temporal.api.history.v1.History.create({ events });
    // The replayer's core may log the workflow task it fails (whether it reaches the Runtime's
    // logger depends on timing): it is this test's own, so declared, not asserted.
    expectSdkLog(
      ({ message, meta }) =>
        message === 'Failing workflow task' && /Nondeterminism/.test(String(meta.failure)),
    );
    const [result] = await replay([{ workflowId: 'withdrawal-reordered', history: altered }]);
    expect(String(result?.error)).toMatch(/Nondeterminism|TMPRL1100/);
    await settleSdkLogs();
  });
});
