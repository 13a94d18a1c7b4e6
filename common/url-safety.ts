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

function inAllowedRange(addr: ipaddr.IPv4 | ipaddr.IPv6, cidrs: string[]): boolean {
  return cidrs.some((c) => {
    const [net, bits] = ipaddr.parseCIDR(c);
    return net.kind() === addr.kind() && addr.match([net, bits] as never);
  });
}

/** The address, an IPv4-mapped IPv6 one as the IPv4 address it is. */
function unmapped(address: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const addr = ipaddr.parse(address);
  return addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()
    ? (addr as ipaddr.IPv6).toIPv4Address()
    : addr;
}

/** Why an address may not be called; undefined when it may. */
export function addressProblem(address: string, policy: UrlPolicy): string | undefined {
  if (!ipaddr.isValid(address)) return `${address} is not an IP address`;
  const addr = unmapped(address);
  const range = addr.range();
  if (range === 'unicast') return undefined;
  if (range === 'loopback' && policy.allowLoopback) return undefined;
  if (inAllowedRange(addr, policy.allowedCidrs)) return undefined;
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
