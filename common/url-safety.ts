import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

// Where pixflow may send webhooks: public addresses over https. Loopback (http allowed) only when
// a development setting says so; private, link-local, shared and other special ranges only when
// the operator lists them. Checked on the URL when an endpoint is saved, and on every address a
// name resolves to when a delivery connects, so a name cannot later point into the network
// pixflow runs in.

export interface UrlPolicy {
  /** Loopback addresses and `localhost`, over http too (development). */
  allowLoopback: boolean;
  /** Ranges allowed although not public, e.g. the operator's own network: `10.1.0.0/16`. */
  allowedCidrs: string[];
}

const MAX_URL_LENGTH = 2048;

// Which addresses are globally routable unicast comes from ipaddr.js's range(), which follows the
// IANA IPv4 and IPv6 Special-Purpose Address Registries: 2.5 names every block of both (RFC 9637's
// 3fff::/20 and RFC 9602's 5f00::/16 included) plus IPv4 multicast, 240/4 and the broadcast
// address, and calls whatever is in none of them 'unicast'. For IPv6 that is too wide: the IANA
// IPv6 Address Space registry allocates only 2000::/3 to global unicast, the rest is reserved
// (::/8 with the deprecated IPv4-compatible ::/96, 4000::/3 and the like). No npm package ships
// those registries as maintained data, so that one prefix is here and every other range is
// ipaddr.js's, updated with it. test/unit/url-safety.test.ts checks every registry block.
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number];

function inAllowedRange(addr: ipaddr.IPv4 | ipaddr.IPv6, cidrs: string[]): boolean {
  return cidrs.some((c) => {
    const [net, bits] = ipaddr.parseCIDR(c);
    return net.kind() === addr.kind() && addr.match([net, bits] as never);
  });
}

/** The IPv4 address an IPv4-mapped IPv6 one is; undefined for any other. */
function mappedIPv4(addr: ipaddr.IPv4 | ipaddr.IPv6): ipaddr.IPv4 | undefined {
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()
    ? (addr as ipaddr.IPv6).toIPv4Address()
    : undefined;
}

/** The address, an IPv4-mapped IPv6 one as the IPv4 address it is. */
function unmapped(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const addr = ipaddr.parse(address);
  return mappedIPv4(addr) ?? addr;
}

/** The special range an address is in, or `unicast` when it is globally routable unicast. */
function rangeOf(addr: ipaddr.IPv4 | ipaddr.IPv6): string {
  const range = addr.range();
  if (range !== 'unicast' || addr.kind() === 'ipv4') return range;
  const v6 = addr as ipaddr.IPv6;
  // ::a.b.c.d: an IPv4 address tunnelled to by whatever route ::/96 has (none, or a SIT device).
  if (v6.parts.slice(0, 6).every((p) => p === 0)) return 'ipv4Compatible';
  return v6.match(GLOBAL_UNICAST_V6) ? 'unicast' : 'reserved';
}

/** Whether the settings let this address in although it is not globally routable. */
const allowedBySettings = (addr: ipaddr.IPv4 | ipaddr.IPv6, policy: UrlPolicy) =>
  (policy.allowLoopback && addr.range() === 'loopback') || inAllowedRange(addr, policy.allowedCidrs);

/**
 * Why an address may not be called; undefined when it may: globally routable unicast only, and
 * beyond that what WEBHOOK_ALLOW_LOOPBACK and WEBHOOK_ALLOWED_CIDRS list. Addresses that carry an
 * IPv4 address inside IPv6 (mapped, compatible, NAT64, 6to4, Teredo) are refused: their IPv4 one
 * is what to register. A mapped one whose IPv4 address the settings allow is let in as that one.
 */
export function addressProblem(address: string, policy: UrlPolicy): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const addr = ipaddr.parse(address);
  const v4 = mappedIPv4(addr);
  if (allowedBySettings(addr, policy) || (v4 && allowedBySettings(v4, policy))) return undefined;
  if (v4)
    return `${address} is an ipv4Mapped address (${v4.toString()}, ${rangeOf(v4)}), which webhooks may not be sent to`;
  const range = rangeOf(addr);
  if (range === 'unicast') return undefined;
  return `${address} is a ${range} address, which webhooks may not be sent to`;
}

const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost');

/** The URL's host without IPv6 brackets. */
const hostOf = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Why a webhook URL is refused; undefined when it is accepted. Names other than localhost are
 * checked when a delivery resolves them (guardedLookup).
 */
export function webhookUrlProblem(raw: string, policy: UrlPolicy): string | undefined {
  if (raw.length > MAX_URL_LENGTH) return `must be at most ${MAX_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return 'is not a URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  const host = hostOf(url);
  const loopbackName = isLocalhostName(host);
  const literal = ipaddr.isValid(host);
  const loopback = loopbackName || (literal && unmapped(host).range() === 'loopback');
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback && policy.allowLoopback)) {
    return policy.allowLoopback ? 'must be https (or http to a loopback address)' : 'must be https';
  }
  if (loopbackName)
    return policy.allowLoopback ? undefined : `${host} is loopback, which webhooks may not be sent to`;
  if (literal) return addressProblem(host, policy);
  return undefined;
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for http(s).request that resolves as usual, then refuses the connection unless every
 * address the name resolves to may be called.
 */
export function guardedLookup(policy: UrlPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback) => {
    dnsLookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, []);
      const list = addresses as LookupAddress[];
      const bad = list.map((a) => addressProblem(a.address, policy)).find((p) => p !== undefined);
      if (bad || list.length === 0) {
        const refused: NodeJS.ErrnoException = new Error(bad ?? `${hostname} resolves to no address`);
        refused.code = 'EADDRNOTALLOWED';
        return callback(refused, []);
      }
      if (options.all) return callback(null, list);
      const first = list[0] as LookupAddress;
      callback(null, first.address, first.family);
    });
  };
}
