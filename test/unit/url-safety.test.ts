import ipaddr from 'ipaddr.js';
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

  it.each([
    // IPv4 inside IPv6: each reaches (or tunnels to) an IPv4 address the checks above never see.
    ['https://[::127.0.0.1]/', 'ipv4Compatible'],
    ['https://[::a9fe:a9fe]/', 'ipv4Compatible'],
    ['https://[::a00:1]/', 'ipv4Compatible'],
    ['https://[::8.8.8.8]/', 'ipv4Compatible'],
    ['https://[::ffff:127.0.0.1]/', 'ipv4Mapped'],
    ['https://[::ffff:169.254.169.254]/', 'linkLocal'],
    ['https://[::ffff:8.8.8.8]/', 'ipv4Mapped'],
    ['https://[::ffff:0:a9fe:a9fe]/', 'rfc6145'],
    ['https://[64:ff9b::a9fe:a9fe]/', 'rfc6052'],
    ['https://[64:ff9b::808:808]/', 'rfc6052'],
    ['https://[64:ff9b:1::a00:1]/', 'rfc6052'],
    ['https://[2002:a9fe:a9fe::1]/', '6to4'],
    ['https://[2002:808:808::1]/', '6to4'],
    ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', 'teredo'],
    // Special purpose and reserved.
    ['https://[::]/', 'unspecified'],
    ['https://[fe80::1]/', 'linkLocal'],
    ['https://[fc00::1]/', 'uniqueLocal'],
    ['https://[fec0::1]/', 'deprecatedSiteLocal'],
    ['https://[ff02::1]/', 'multicast'],
    ['https://[ff0e::1]/', 'multicast'],
    ['https://[2001:db8::1]/', 'reserved'],
    ['https://[3fff::1]/', 'reserved'],
    ['https://[2001:2::1]/', 'benchmarking'],
    ['https://[2001:10::1]/', 'deprecatedOrchid'],
    ['https://[2001:20::1]/', 'orchid2'],
    ['https://[100::1]/', 'discard'],
    ['https://[100:0:0:1::1]/', 'reserved'],
    ['https://[5f00::1]/', 'segmentRouting'],
    ['https://[4000::1]/', 'reserved'],
    ['https://[e000::1]/', 'reserved'],
    ['https://0.1.2.3/', 'unspecified'],
    ['https://255.255.255.255/', 'broadcast'],
    ['https://240.0.0.1/', 'reserved'],
    ['https://224.0.0.1/', 'multicast'],
    ['https://239.255.255.250/', 'multicast'],
    ['https://192.0.2.1/', 'reserved'],
    ['https://198.51.100.7/', 'reserved'],
    ['https://203.0.113.9/', 'reserved'],
    ['https://198.18.0.1/', 'reserved'],
    ['https://192.0.0.8/', 'reserved'],
    ['https://100.127.255.254/', 'carrierGradeNat'],
    // Other spellings of an IPv4 address end up as the address itself.
    ['https://0x7f.1/', 'loopback'],
    ['https://2130706433/', 'loopback'],
    ['https://0251.0376.0251.0376/', 'linkLocal'],
  ])('refuses %s (%s)', (url, why) => {
    expect(webhookUrlProblem(url, strict)).toContain(why);
  });

  it('accepts global unicast addresses only: every IANA special-purpose block is refused', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '2a00:1450::1'])
      expect(addressProblem(a, strict), a).toBeUndefined();
    // The first and last address of each block of the IANA IPv4 and IPv6 Special-Purpose Address
    // Registries, IPv4 multicast, and the IPv6 Address Space registry's blocks outside 2000::/3.
    const blocks = [
      '0.0.0.0/8',
      '10.0.0.0/8',
      '100.64.0.0/10',
      '127.0.0.0/8',
      '169.254.0.0/16',
      '172.16.0.0/12',
      '192.0.0.0/24',
      '192.0.2.0/24',
      '192.31.196.0/24',
      '192.52.193.0/24',
      '192.88.99.0/24',
      '192.168.0.0/16',
      '192.175.48.0/24',
      '198.18.0.0/15',
      '198.51.100.0/24',
      '203.0.113.0/24',
      '224.0.0.0/4',
      '240.0.0.0/4',
      '::/96',
      '::ffff:0:0/96',
      '64:ff9b::/96',
      '64:ff9b:1::/48',
      '100::/64',
      '100:0:0:1::/64',
      '2001::/23',
      '2001::/32',
      '2001:2::/48',
      '2001:3::/32',
      '2001:4:112::/48',
      '2001:20::/28',
      '2001:30::/28',
      '2001:db8::/32',
      '2002::/16',
      '2620:4f:8000::/48',
      '3fff::/20',
      '5f00::/16',
      'fc00::/7',
      'fe80::/10',
      'ff00::/8',
      '::/8',
      '100::/8',
      '200::/7',
      '400::/6',
      '800::/5',
      '1000::/4',
      '4000::/3',
      '6000::/3',
      '8000::/3',
      'a000::/3',
      'c000::/3',
      'e000::/4',
      'f000::/5',
      'f800::/6',
      'fe00::/9',
      'fec0::/10',
    ];
    for (const block of blocks) {
      const [first, last] =
        [ipaddr.IPv4, ipaddr.IPv6]
          .map((kind) => (kind.isValidCIDR(block) ? kind : undefined))
          .filter((k) => k !== undefined)
          .map((kind) => [kind.networkAddressFromCIDR(block), kind.broadcastAddressFromCIDR(block)])[0] ?? [];
      for (const a of [first, last]) {
        expect(a, block).toBeDefined();
        expect(addressProblem(String(a), strict), `${a} in ${block}`).toMatch(/may not be sent to/);
      }
    }
  });

  it('lets in what WEBHOOK_ALLOWED_CIDRS lists, and loopback only in its own forms', () => {
    const nat64 = { allowLoopback: false, allowedCidrs: ['64:ff9b::/96'] };
    expect(webhookUrlProblem('https://[64:ff9b::808:808]/', nat64)).toBeUndefined();
    expect(webhookUrlProblem('https://[64:ff9b:1::808:808]/', nat64)).toContain('rfc6052');
    const listed = { allowLoopback: false, allowedCidrs: ['10.1.0.0/16'] };
    expect(webhookUrlProblem('https://[::ffff:10.1.2.3]/', listed)).toBeUndefined();
    expect(webhookUrlProblem('https://[::a01:203]/', listed)).toContain('ipv4Compatible');
    expect(webhookUrlProblem('https://[::ffff:127.0.0.1]/', dev)).toBeUndefined();
    expect(webhookUrlProblem('https://[::127.0.0.1]/', dev)).toContain('ipv4Compatible');
    expect(webhookUrlProblem('https://[64:ff9b::7f00:1]/', dev)).toContain('rfc6052');
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
