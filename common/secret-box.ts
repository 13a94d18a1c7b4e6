import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { CodecKeys } from './codec';

// Secrets pixflow must read back (webhook signing secrets) are kept sealed with the payload
// codec's keys (AES-256-GCM): `<key id>.<base64url of iv | ciphertext | tag>`. A dump of the
// database alone reveals none, and a rotated codec key still opens what the old one sealed while
// it stays configured.

const IV_BYTES = 12;
const TAG_BYTES = 16;

export function sealSecret(keys: CodecKeys, plain: string): string {
  const key = keys.keys.get(keys.activeKeyId) as Buffer;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `${keys.activeKeyId}.${sealed.toString('base64url')}`;
}

export function openSecret(keys: CodecKeys, sealed: string): string {
  const dot = sealed.lastIndexOf('.');
  const key = keys.keys.get(sealed.slice(0, dot));
  if (dot <= 0 || !key) throw new Error('secret sealed with a key that is not configured');
  const data = Buffer.from(sealed.slice(dot + 1), 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, IV_BYTES));
  decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
  return Buffer.concat([
    decipher.update(data.subarray(IV_BYTES, data.length - TAG_BYTES)),
    decipher.final(),
  ]).toString('utf8');
}
