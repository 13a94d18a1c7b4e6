import { describe, expect, it } from 'vitest';
import { addressProblem, guardedLookup, webhookUrlProblem } from '../../common/url-safety';

const strict = { allowLoopback: false, allowedCidrs: [] };
const dev = { allowLoopback: true, allowedCidrs: [] };

describe('where webhooks may go', () => {
  it('accepts public https URLs, by name or address', () => {
    expect(webhookUrlProblem('https://hooks.example.com/pixflow', strict)).toBeUndefined();
    expect(webhookUrlProblem('https://8.8.8.8/hooks', strict)).toBeUndefined();
    expect(webhookUrlProblem('https://[2606:4700:4700::1111]/hooks', strict)).toBeUndefined();
  });

  it.each([
    ['not a url', 'is not a URL'],
    ['http://hooks.example.com/', 'must be https'],
    ['ftp://hooks.example.com/', 'must be https'],
    ['https://user:secret@hooks.example.com/', 'must not carry credentials'],
    ['https://10.0.0.1/', 'private'],
    ['https://172.16.5.4/', 'private'],
    ['https://192.168.0.10/', 'private'],
    ['https://100.64.1.1/', 'carrierGradeNat'],
    ['https://169.254.169.254/latest/meta-data', 'linkLocal'],
    ['https://[fe80::1]/', 'linkLocal'],
    ['https://[fd12:3456::1]/', 'uniqueLocal'],
    ['https://[::ffff:10.0.0.1]/', 'private'],
    ['https://0.0.0.0/', 'unspecified'],
    ['https://127.0.0.1/', 'loopback'],
    ['https://[::1]/', 'loopback'],
    ['https://localhost/', 'loopback'],
    ['https://api.localhost/', 'loopback'],
    [`https://example.com/${'a'.repeat(2100)}`, 'at most 2048'],
  ])('refuses %s', (url, why) => {
    expect(webhookUrlProblem(url, strict)).toContain(why);
  });

  it('lets loopback in, over http too, only when development allows it', () => {
    expect(webhookUrlProblem('http://127.0.0.1:4000/hooks', dev)).toBeUndefined();
    expect(webhookUrlProblem('http://localhost:4000/hooks', dev)).toBeUndefined();
    expect(webhookUrlProblem('https://[::1]/hooks', dev)).toBeUndefined();
    expect(webhookUrlProblem('http://hooks.example.com/', dev)).toContain('loopback');
    expect(webhookUrlProblem('https://10.0.0.1/', dev)).toContain('private');
  });

  it('lets in the private ranges the operator lists, and only those', () => {
    const listed = { allowLoopback: false, allowedCidrs: ['10.1.0.0/16', 'fd00::/8'] };
    expect(webhookUrlProblem('https://10.1.2.3/hooks', listed)).toBeUndefined();
    expect(webhookUrlProblem('https://[fd00::5]/hooks', listed)).toBeUndefined();
    expect(webhookUrlProblem('https://10.2.0.1/hooks', listed)).toContain('private');
    expect(addressProblem('10.1.255.255', listed)).toBeUndefined();
  });

  it('refuses a name whose address is not allowed when the delivery resolves it', async () => {
    const resolve = (policy: typeof strict, all: boolean) =>
      new Promise<{ err: NodeJS.ErrnoException | null; address: unknown }>((done) =>
        guardedLookup(policy)('localhost', { all }, (err, address) => done({ err, address })),
      );
    const refused = await resolve(strict, false);
    expect(refused.err?.code).toBe('EADDRNOTALLOWED');
    expect(refused.err?.message).toMatch(/loopback/);
    const allowed = await resolve(dev, false);
    expect(allowed.err).toBeNull();
    expect(allowed.address).toMatch(/^(127\.0\.0\.1|::1)$/);
    const list = await resolve(dev, true);
    expect(Array.isArray(list.address)).toBe(true);
  });
});
