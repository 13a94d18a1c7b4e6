import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, inject, it } from 'vitest';
import { EncryptionCodec } from '../../common/codec';
import { HISTORIES_DIR } from '../helpers/histories';
import { testCodecKeys } from '../helpers/temporal';

// Saved histories of every flow, replayed against the current workflow code: a change that
// breaks determinism (reordered commands, a removed activity, a new timer) fails here.
// Re-record after an intended, versioned change: RECORD_HISTORIES=1 npx vitest run test/workflows

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

describe('replay of saved histories', () => {
  it('has a history of every flow', () => {
    for (const flow of ['onboarding', 'deposit', 'withdrawal', 'biometrics']) {
      expect(
        files.some((f) => f.startsWith(flow)),
        flow,
      ).toBe(true);
    }
  });

  it('replays every one without nondeterminism', async () => {
    const histories = await Promise.all(
      files.map(async (f) => ({
        workflowId: path.basename(f, '.history.pb'),
        history: await decrypted(
          temporal.api.history.v1.History.decode(readFileSync(path.join(HISTORIES_DIR, f))),
        ),
      })),
    );
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
