import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

export const HISTORIES_DIR = path.resolve(__dirname, '../fixtures/histories');

/**
 * With RECORD_HISTORIES=1, keeps a finished flow's history as a replay fixture
 * (test/workflows/replay.test.ts replays every one against the current workflow code).
 */
export async function recordHistory(handle: WorkflowHandle, name: string): Promise<void> {
  if (!process.env.RECORD_HISTORIES) return;
  const history = await handle.fetchHistory();
  // Binary protobuf: exact, compact, and what the SDK's own replay tests read.
  writeFileSync(
    path.join(HISTORIES_DIR, `${name}.history.pb`),
    temporal.api.history.v1.History.encode(history).finish(),
  );
}

/** A flow's history as the server stores and sends it: its size in protobuf bytes. */
export async function historyBytes(handle: WorkflowHandle): Promise<number> {
  return temporal.api.history.v1.History.encode(await handle.fetchHistory()).finish().length;
}

/** The patch ids a flow recorded, in order: each `core_patch` marker's details as text. */
export async function patchMarkers(handle: WorkflowHandle): Promise<string[]> {
  return ((await handle.fetchHistory()).events ?? [])
    .map((e) => e.markerRecordedEventAttributes)
    .filter((m) => m?.markerName === 'core_patch')
    .map((m) =>
      Object.values(m?.details ?? {})
        .flatMap((d) => d.payloads ?? [])
        .map((p) => Buffer.from(p.data ?? []).toString())
        .join(),
    );
}
