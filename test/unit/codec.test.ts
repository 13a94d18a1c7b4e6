import { createCipheriv, randomBytes } from 'node:crypto';
import { DefaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { EncryptionCodec, parseCodecKeys } from '../../common/codec';
import { ConfigError, loadConfig } from '../../common/config';

const k = () => randomBytes(32).toString('base64');
const converter = new DefaultPayloadConverter();
const secret = { cpf: '63401825771', name: 'Ana Souza', email: 'ana@example.com' };

describe('payload encryption codec', () => {
  it('round-trips and hides the plain text', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(`a:${k()}`, 'a'));
    const payload = converter.toPayload(secret);
    const [sealed] = await codec.encode([payload]);
    const raw = Buffer.from(sealed!.data!).toString('latin1');
    for (const v of Object.values(secret)) expect(raw).not.toContain(v);
    const [opened] = await codec.decode([sealed!]);
    expect(converter.fromPayload(opened!)).toEqual(secret);
  });

  it('reads payloads of an older key after rotation, and writes with the new one', async () => {
    const oldKey = k();
    const before = new EncryptionCodec(parseCodecKeys(`old:${oldKey}`, 'old'));
    const [sealed] = await before.encode([converter.toPayload(secret)]);
    const after = new EncryptionCodec(parseCodecKeys(`old:${oldKey},new:${k()}`, 'new'));
    expect(converter.fromPayload((await after.decode([sealed!]))[0]!)).toEqual(secret);
    const [fresh] = await after.encode([converter.toPayload(1)]);
    await expect(before.decode([fresh!])).rejects.toThrow(/unknown key id "new"/);
    expect(converter.fromPayload((await after.decode([fresh!]))[0]!)).toBe(1);
  });

  it('names the key inside the sealed data, authenticated: only the encoding is in the metadata', async () => {
    const key = k();
    const codec = new EncryptionCodec(parseCodecKeys(`a:${key},b:${key}`, 'a'));
    const [sealed] = await codec.encode([converter.toPayload(secret)]);
    expect(Object.keys(sealed!.metadata!)).toEqual(['encoding']);
    const data = Buffer.from(sealed!.data!);
    expect(data.subarray(0, 2).toString('latin1')).toBe('\x01a');
    // Another id for the very same key does not open it: the id is part of what is sealed.
    data[1] = 'b'.charCodeAt(0);
    await expect(codec.decode([{ ...sealed!, data }])).rejects.toThrow();
    await expect(codec.decode([{ ...sealed!, data: data.subarray(0, 1) }])).rejects.toThrow(/truncated/);
  });

  it('reads payloads sealed with the key id in their metadata', async () => {
    const key = randomBytes(32);
    const inner = temporal.api.common.v1.Payload.encode(converter.toPayload(secret)).finish();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    const data = Buffer.concat([iv, cipher.update(inner), cipher.final(), cipher.getAuthTag()]);
    const older = {
      metadata: { encoding: Buffer.from('binary/encrypted'), 'encryption-key-id': Buffer.from('old') },
      data,
    };
    const codec = new EncryptionCodec(parseCodecKeys(`old:${key.toString('base64')}`, 'old'));
    expect(converter.fromPayload((await codec.decode([older]))[0]!)).toEqual(secret);
  });

  it('leaves an empty result as it is: it holds nothing to hide', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(`a:${k()}`, 'a'));
    const none = converter.toPayload(undefined);
    const [kept] = await codec.encode([none]);
    expect(kept).toEqual(none);
    expect(converter.fromPayload((await codec.decode([kept!]))[0]!)).toBeUndefined();
    // null is data (JSON), and sealed like any other value.
    const [sealedNull] = await codec.encode([converter.toPayload(null)]);
    expect(Buffer.from(sealedNull!.metadata!.encoding!).toString()).toBe('binary/encrypted');
  });

  it('refuses a tampered payload and an unknown key id', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(`a:${k()}`, 'a'));
    const [sealed] = await codec.encode([converter.toPayload(secret)]);
    const data = Buffer.from(sealed!.data!);
    data[20] = (data[20] ?? 0) ^ 1;
    await expect(codec.decode([{ ...sealed!, data }])).rejects.toThrow();
    const other = new EncryptionCodec(parseCodecKeys(`b:${k()}`, 'b'));
    await expect(other.decode([sealed!])).rejects.toThrow(/unknown key id "a"/);
  });

  it('deflates a payload that gets smaller, before sealing it; one that would not stays as it is', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(`a:${k()}`, 'a'));
    const state = {
      ...secret,
      steps: Array.from({ length: 20 }, (_, i) => ({ status: 'awaiting_payment', i })),
    };
    const plain = converter.toPayload(state);
    const [sealed] = await codec.encode([plain]);
    expect(sealed!.data!.length).toBeLessThan(plain.data!.length / 2);
    expect(converter.fromPayload((await codec.decode([sealed!]))[0]!)).toEqual(state);
    // A payload too small to deflate is sealed as before compression existed, and reads the same.
    const one = converter.toPayload(1);
    const [small] = await codec.encode([one]);
    const overhead = 2 + 12 + 16; // key id's length and id, IV and tag
    expect(small!.data!.length).toBe(temporal.api.common.v1.Payload.encode(one).finish().length + overhead);
    expect(converter.fromPayload((await codec.decode([small!]))[0]!)).toBe(1);
  });

  it('passes unencrypted payloads through on decode', async () => {
    const codec = new EncryptionCodec(parseCodecKeys(`a:${k()}`, 'a'));
    const plain = converter.toPayload('hello');
    expect(await codec.decode([plain])).toEqual([plain]);
  });

  it('bad key configuration fails config loading, naming the variables', () => {
    expect(() => loadConfig({ CODEC_KEYS: 'a:c2hvcnQ=', CODEC_ACTIVE_KEY_ID: 'a' })).toThrow(ConfigError);
    expect(() => loadConfig({ CODEC_KEYS: `a:${k()}`, CODEC_ACTIVE_KEY_ID: 'b' })).toThrow(
      /CODEC_ACTIVE_KEY_ID/,
    );
  });
});
