import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseCodecKeys } from '../../common/codec';
import { openSecret } from '../../common/secret-box';
import { type AccountKeys, sealBrandAccount, secretHash } from '../../connectors/accounts';
import type { BrandAccount } from '../../contracts/brand-account';

// A brand's account as it is stored: the secrets sealed with the codec's active key, each with a
// hash keyed by PII_HASH_KEY and told apart by its connector and name, so the same text as two
// secrets is two hashes and a database alone neither opens nor guesses them.

const fresh = () => randomBytes(18).toString('base64url');
const keysOf = (hashKey = fresh()): AccountKeys => {
  const id = `k${randomBytes(2).toString('hex')}`;
  return { codecKeys: parseCodecKeys(`${id}:${randomBytes(32).toString('base64')}`, id), hashKey };
};

const account = (): Extract<BrandAccount, { connector: 'api-pix' }> => ({
  connector: 'api-pix',
  settings: {
    baseUrl: 'https://pix.psp.example/api/v2',
    clientId: 'bet-rio',
    pixKey: 'pix@bet-rio.example',
    certFile: '/run/secrets/cert.pem',
    keyFile: '/run/secrets/key.pem',
  },
  secrets: { clientSecret: fresh() },
});

describe("a brand's account sealed", () => {
  it('keeps the settings as they are and seals the secrets set, which the same keys open', () => {
    const keys = keysOf();
    const a = account();
    const sealed = sealBrandAccount(keys, 'bet-rio', a);
    expect(sealed).toMatchObject({ brandId: 'bet-rio', connector: 'api-pix', settings: a.settings });
    expect(sealed.secretsSealed).not.toContain(a.secrets.clientSecret);
    expect(JSON.parse(openSecret(keys.codecKeys, sealed.secretsSealed))).toEqual(a.secrets);
    // An optional secret not given is neither sealed nor hashed: it reads as not set.
    expect(Object.keys(sealed.secretHashes)).toEqual(['clientSecret']);
    expect(() => openSecret(keysOf().codecKeys, sealed.secretsSealed)).toThrow();
  });

  it('hashes each secret under the hash key, its connector and its name', () => {
    const key = fresh();
    const value = fresh();
    const hash = secretHash(key, 'api-pix', 'webhookSecret', value);
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    expect(secretHash(key, 'api-pix', 'webhookSecret', value)).toBe(hash);
    expect(secretHash(fresh(), 'api-pix', 'webhookSecret', value)).not.toBe(hash);
    expect(secretHash(key, 'identity-payments', 'webhookSecret', value)).not.toBe(hash);
    expect(secretHash(key, 'api-pix', 'clientSecret', value)).not.toBe(hash);
    // A rotated codec key seals anew, but the hash, which uniqueness and routing go by, stays.
    const a = account();
    const [one, two] = [sealBrandAccount(keysOf(key), 'x', a), sealBrandAccount(keysOf(key), 'x', a)];
    expect(one.secretsSealed).not.toBe(two.secretsSealed);
    expect(one.secretHashes).toEqual(two.secretHashes);
  });
});
