import { randomBytes } from 'node:crypto';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { EncryptionCodec, parseCodecKeys } from '../../common/codec';
import { inTheClear, payloadConverter, withPublicPart } from '../../common/payload-converter';
import type { DepositState } from '../../contracts/deposit';
import { depositOutcome } from '../../nexus/outcomes';

// What crosses Nexus to a caller that holds no pixflow key: pixflow's worker writes it with its
// payload converter (common/payload-converter.ts) and seals it with its codec (common/codec.ts).
// A caller reads it with Temporal's default converter and no codec; pixflow reads it whole.

const codec = new EncryptionCodec(parseCodecKeys(`k1:${randomBytes(32).toString('base64')}`, 'k1'));
const person = { cpf: '63401825771', name: 'Ana Souza', email: 'ana@example.com' };
/** A payload as the server keeps it: every byte, metadata included. */
const bytes = (p: Payload) => Buffer.from(temporal.api.common.v1.Payload.encode(p).finish());
const encodingOf = (p: Payload) => Buffer.from(p.metadata?.encoding ?? []).toString();

const finalState: DepositState = {
  status: 'completed',
  txid: '123456789012345678901234567890',
  amountCentavos: 15_000,
  payment: {
    e2eId: 'E123',
    payerName: person.name,
    payerCpfMasked: '***.018.257-**',
    paidAt: '2026-11-27T10:00:00Z',
  },
  notifications: 1,
  inquiries: 1,
  startedAt: '2026-11-27T09:59:00Z',
  updatedAt: '2026-11-27T10:00:01Z',
  finishedAt: '2026-11-27T10:00:01Z',
};

describe("pixflow's payloads as a keyless caller and pixflow read them", () => {
  it('seals a value with nothing marked, as every payload before: a caller cannot read it', async () => {
    const [sealed] = await codec.encode([payloadConverter.toPayload({ client: person })]);
    expect(encodingOf(sealed!)).toBe('binary/encrypted');
    for (const v of Object.values(person)) expect(bytes(sealed!).includes(v)).toBe(false);
    expect(() => defaultPayloadConverter.fromPayload(sealed!)).toThrow();
    expect(defaultPayloadConverter.fromPayload((await codec.decode([sealed!]))[0]!)).toEqual({
      client: person,
    });
  });

  it('leaves a value marked in the clear as plain JSON, read alike with or without the codec', async () => {
    const answer = { workflowId: 'deposit-1', txid: '1', created: true };
    const [encoded] = await codec.encode([payloadConverter.toPayload(inTheClear({ ...answer }))]);
    expect(encodingOf(encoded!)).toBe('json/plain');
    expect(Object.keys(encoded!.metadata ?? {})).toEqual(['encoding']);
    expect(defaultPayloadConverter.fromPayload(encoded!)).toEqual(answer);
    expect(defaultPayloadConverter.fromPayload((await codec.decode([encoded!]))[0]!)).toEqual(answer);
  });

  it('gives a flow final state as its outcome in the clear and the whole state sealed beside it', async () => {
    const value = withPublicPart({ ...finalState }, depositOutcome(finalState));
    const written = payloadConverter.toPayload(value);
    const [encoded] = await codec.encode([written]);
    // What the server keeps and a caller gets: the outcome, no name, no masked CPF, no plain whole.
    expect(Object.keys(encoded!.metadata ?? {}).sort()).toEqual(['encoding', 'pixflow-sealed']);
    for (const v of [person.name, '***.018.257-**']) expect(bytes(encoded!).includes(v)).toBe(false);
    expect(defaultPayloadConverter.fromPayload(encoded!)).toEqual({
      flow: 'deposit',
      status: 'completed',
      txid: finalState.txid,
      amountCentavos: 15_000,
      e2eId: 'E123',
      paidAt: '2026-11-27T10:00:00Z',
      startedAt: finalState.startedAt,
      updatedAt: finalState.updatedAt,
      finishedAt: finalState.finishedAt,
    });
    // pixflow's clients read the whole state, payer and all.
    expect(defaultPayloadConverter.fromPayload((await codec.decode([encoded!]))[0]!)).toEqual(finalState);
    // Another key cannot open the sealed whole.
    const stranger = new EncryptionCodec(parseCodecKeys(`k1:${randomBytes(32).toString('base64')}`, 'k1'));
    await expect(stranger.decode([encoded!])).rejects.toThrow();
  });
});
