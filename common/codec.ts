import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import { METADATA_ENCODING_KEY, type Payload, type PayloadCodec } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { CLEAR_METADATA, SEALED_WHOLE_METADATA, WHOLE_METADATA } from './payload-converter';

// Encrypts every payload pixflow sends to Temporal (workflow inputs, results, signals, queries,
// updates, memos, user metadata) with AES-256-GCM, so CPFs, names and e-mails never sit in
// Temporal's database in plain text. Each payload names the key that sealed it: keys can
// rotate, old histories stay readable while their key is still configured. A payload that
// deflates smaller is deflated first (ciphertext does not compress), so histories stay small.
// The one exception is what crosses Nexus to another namespace's workflows, which hold no pixflow
// key: what the worker's payload converter marks (common/payload-converter.ts) keeps its data in
// the clear, a part with no personal data, and the whole value sealed beside it.

const ENCRYPTED_ENCODING = 'binary/encrypted';
const KEY_ID_METADATA = 'encryption-key-id';
/**
 * First byte of a deflated plaintext. A serialized Payload never starts with it (protobuf has no
 * field 0), so a payload sealed without deflating reads as it is, and the flag costs one byte,
 * not a metadata entry in every payload of every history.
 */
const DEFLATED = 0x00;
const CIPHER = 'aes-256-gcm';
const IV_BYTES = 12;
const TAG_BYTES = 16;

const { Payload: PayloadProto } = temporal.api.common.v1;
const text = new TextEncoder();
const untext = new TextDecoder();

export class CodecKeyError extends Error {}

export interface CodecKeys {
  /** key id -> 32-byte key */
  keys: Map<string, Buffer>;
  /** the id new payloads are encrypted with */
  activeKeyId: string;
}

/** Parses `id1:base64key,id2:base64key`; each key must decode to exactly 32 bytes. */
export function parseCodecKeys(spec: string, activeKeyId: string): CodecKeys {
  const keys = new Map<string, Buffer>();
  for (const entry of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const sep = entry.indexOf(':');
    const id = entry.slice(0, sep);
    const key = Buffer.from(entry.slice(sep + 1), 'base64');
    if (sep <= 0 || Buffer.byteLength(id) > 255 || key.length !== 32)
      throw new CodecKeyError(
        `codec key "${(id || entry).slice(0, 8)}" must be <id of 1 to 255 bytes>:<32 bytes in base64>`,
      );
    keys.set(id, key);
  }
  if (!keys.has(activeKeyId))
    throw new CodecKeyError(`active codec key id "${activeKeyId}" is not among the configured keys`);
  return { keys, activeKeyId };
}

export class EncryptionCodec implements PayloadCodec {
  constructor(private readonly cfg: CodecKeys) {}

  async encode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      if (isBareNull(p)) return p;
      if (!p.metadata?.[CLEAR_METADATA]) return this.seal(p);
      const { [CLEAR_METADATA]: _clear, [WHOLE_METADATA]: whole, ...metadata } = p.metadata;
      if (!whole) return { metadata, data: p.data };
      // The whole value sealed as its own payload, with the encoding it was written in.
      const encoding = metadata[METADATA_ENCODING_KEY];
      const sealed = this.seal({
        metadata: encoding ? { [METADATA_ENCODING_KEY]: encoding } : {},
        data: whole,
      });
      return { metadata: { ...metadata, [SEALED_WHOLE_METADATA]: sealed.data! }, data: p.data };
    });
  }

  private seal(p: Payload): Payload {
    const keyId = text.encode(this.cfg.activeKeyId);
    const key = this.cfg.keys.get(this.cfg.activeKeyId)!;
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv(CIPHER, key, iv);
    cipher.setAAD(keyId);
    const proto = PayloadProto.encode(p).finish();
    const deflated = deflateRawSync(proto);
    const plain = deflated.length + 1 < proto.length ? Buffer.concat([Buffer.of(DEFLATED), deflated]) : proto;
    const sealed = Buffer.concat([
      Buffer.of(keyId.length),
      keyId,
      iv,
      cipher.update(plain),
      cipher.final(),
      cipher.getAuthTag(),
    ]);
    return { metadata: { [METADATA_ENCODING_KEY]: text.encode(ENCRYPTED_ENCODING) }, data: sealed };
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((p) => {
      const whole = p.metadata?.[SEALED_WHOLE_METADATA];
      if (whole)
        return this.open({
          metadata: { [METADATA_ENCODING_KEY]: text.encode(ENCRYPTED_ENCODING) },
          data: whole,
        });
      return this.open(p);
    });
  }

  private open(p: Payload): Payload {
    const encoding = p.metadata?.[METADATA_ENCODING_KEY];
    if (!encoding || untext.decode(encoding) !== ENCRYPTED_ENCODING) return p;
    const data = Buffer.from(p.data ?? new Uint8Array());
    const idInMetadata = p.metadata?.[KEY_ID_METADATA];
    const sealed = idInMetadata
      ? { keyId: untext.decode(idInMetadata), aad: undefined, rest: data }
      : keyIdInData(data);
    const key = this.cfg.keys.get(sealed.keyId);
    if (!key) throw new CodecKeyError(`payload encrypted with unknown key id "${sealed.keyId}"`);
    const { rest } = sealed;
    if (rest.length < IV_BYTES + TAG_BYTES) throw new CodecKeyError('encrypted payload is truncated');
    const decipher = createDecipheriv(CIPHER, key, rest.subarray(0, IV_BYTES));
    if (sealed.aad) decipher.setAAD(sealed.aad);
    decipher.setAuthTag(rest.subarray(rest.length - TAG_BYTES));
    const plain = Buffer.concat([
      decipher.update(rest.subarray(IV_BYTES, rest.length - TAG_BYTES)),
      decipher.final(),
    ]);
    const deflated = plain.length > 0 && plain[0] === DEFLATED;
    return PayloadProto.decode(deflated ? inflateRawSync(plain.subarray(1)) : plain) as Payload;
  }
}

/**
 * An empty result (`undefined`) has nothing to hide: sealing it would make it several times
 * larger in every history that records one (each void activity's result).
 */
function isBareNull(p: Payload): boolean {
  const keys = Object.keys(p.metadata ?? {});
  return (
    keys.length === 1 &&
    keys[0] === METADATA_ENCODING_KEY &&
    untext.decode(p.metadata![METADATA_ENCODING_KEY]!) === 'binary/null' &&
    (p.data?.length ?? 0) === 0
  );
}

/**
 * The key id travels at the start of the sealed data (its length, then its bytes), authenticated
 * as the cipher's additional data: a metadata entry would cost its name in every payload.
 * Payloads sealed before carry it in the `encryption-key-id` metadata and read as they did.
 */
function keyIdInData(data: Buffer): { keyId: string; aad: Buffer; rest: Buffer } {
  const length = data[0] ?? 0;
  if (data.length < 1 + length) throw new CodecKeyError('encrypted payload is truncated');
  const aad = data.subarray(1, 1 + length);
  return { keyId: untext.decode(aad), aad, rest: data.subarray(1 + length) };
}

/** The data converter every pixflow client and worker uses. */
export function pixflowDataConverter(keys: CodecKeys) {
  return { payloadCodecs: [new EncryptionCodec(keys)] };
}
