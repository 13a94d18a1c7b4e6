import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { TLSSocket } from 'node:tls';
import type { RequestHandler } from 'express';
import type { Logger } from '../common/logger';
import { apiPixWebhookClientCaFiles } from '../db/brand-accounts';
import type { Pool } from '../db/pool';
import type { FailedAuthLimit } from '../http/failed-auth';
import { Problem } from '../http/problem';
import { withTimeout } from '../http/timeout';
import { accountOf, type IngressAccount } from './brand-accounts';

// Which PSPs the API Pix listener lets in, and which may speak for which account (docs/brands.md,
// Each brand's PSP by its own CA). Each brand's API Pix account may name the CA that signs its
// PSP's webhook client certificate; the environment's API_PIX_WEBHOOK_CLIENT_CA_FILE is the
// default brand's, and the CA of every account that names none. The handshake lets in a
// certificate any of them signed; once the path's secret has named the account, the certificate
// must be signed by that account's CA, so a PSP trusted for one brand cannot post for another.
//
// The accounts' CA files are read again every `refreshMs` and the listener's secure context
// replaced when they changed (server.setSecureContext), so a brand given its CA later needs no
// restart. SNICallback could choose a context per handshake, but it runs only for clients that
// send a server name, and a PSP posting to an IP address sends none; checking the CA only in the
// request would have the handshake let any certificate in, and any caller reach the HTTP parser.

/** How often the accounts' CA files are read again. */
export const CLIENT_CA_REFRESH_MS = 15_000;

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The certificates of a PEM text; none when it holds none or one does not parse. */
function certificatesOf(pem: string): X509Certificate[] {
  try {
    return (pem.match(PEM_CERTIFICATE) ?? []).map((block) => new X509Certificate(block));
  } catch {
    return [];
  }
}

interface ReadCa {
  pem: string;
  certs: X509Certificate[];
}

export interface ApiPixClientCas {
  /** Every CA the handshake lets in, PEM: the environment's first, then each account's that reads. */
  pems(): string[];
  /** The CA certificates a callback through `account` must be signed by; none when its file does not read. */
  certsFor(account: IngressAccount): Promise<X509Certificate[]>;
  /** Reads the accounts' CA files again: true when what the handshake lets in changed. */
  refresh(): Promise<boolean>;
}

export function apiPixClientCas(opts: {
  pool: Pool;
  /** API_PIX_WEBHOOK_CLIENT_CA_FILE's content. */
  environmentPem: string;
  log: Logger;
  /** Bound on reading the accounts. */
  timeoutMs?: number;
}): ApiPixClientCas {
  const environment = certificatesOf(opts.environmentPem);
  if (!environment.length) throw new Error('API_PIX_WEBHOOK_CLIENT_CA_FILE: holds no PEM certificate');
  let byFile = new Map<string, ReadCa>();
  let problems = new Set<string>();
  let running: Promise<boolean> | undefined;

  /** A CA file, or why it cannot be taken, naming the brand whose account names it. */
  const readCa = async (brandId: string, file: string): Promise<ReadCa | string> => {
    const where = `brand ${brandId}'s api-pix account: webhookClientCaFile ${JSON.stringify(file)}`;
    let pem: string;
    try {
      pem = await readFile(file, 'utf8');
    } catch (err) {
      return `${where} cannot be read (${(err as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    const certs = certificatesOf(pem);
    return certs.length ? { pem, certs } : `${where} holds no PEM certificate`;
  };

  const reread = async () => {
    const files = await withTimeout(
      apiPixWebhookClientCaFiles(opts.pool),
      opts.timeoutMs ?? 5_000,
      'API Pix client CAs lookup',
    );
    const next = new Map<string, ReadCa>();
    const nextProblems = new Set<string>();
    for (const { brandId, file } of files) {
      if (next.has(file)) continue;
      const read = await readCa(brandId, file);
      if (typeof read === 'string') nextProblems.add(read);
      else next.set(file, read);
    }
    // Each problem said once while it lasts, not at every refresh.
    for (const p of nextProblems)
      if (!problems.has(p)) opts.log.error({ problem: p }, 'API Pix webhook client CA not trusted');
    problems = nextProblems;
    const before = [...byFile.values()].map((c) => c.pem).join('\n');
    byFile = next;
    return [...next.values()].map((c) => c.pem).join('\n') !== before;
  };

  return {
    pems: () => [opts.environmentPem, ...[...byFile.values()].map((c) => c.pem)],
    async certsFor(account) {
      const file = account.webhookClientCaFile;
      if (file === undefined) return environment;
      const kept = byFile.get(file);
      if (kept) return kept.certs;
      // An account given its CA after the last refresh: its handshake came in through another CA.
      const read = await readCa(account.brand, file);
      return typeof read === 'string' ? [] : read.certs;
    },
    refresh() {
      running ??= reread().finally(() => {
        running = undefined;
      });
      return running;
    },
  };
}

/**
 * Whether the peer's certificate is one of `cas` or was signed by one of them, the signature
 * checked: the handshake checked its chain to one of the CAs it lets in, not to which. A server
 * sees the peer's certificate alone, not the intermediates it sent, so the account's file must
 * hold the CA that signs the PSP's certificate itself (with the CAs above it, for the handshake).
 */
export function signedByOneOf(socket: TLSSocket, cas: readonly X509Certificate[]): boolean {
  const peer = socket.getPeerX509Certificate();
  return (
    peer !== undefined &&
    cas.some(
      (ca) =>
        peer.fingerprint256 === ca.fingerprint256 || (peer.checkIssued(ca) && peer.verify(ca.publicKey)),
    )
  );
}

/**
 * After the path's secret named the account: the peer's certificate must chain to that account's
 * CA, or it is a 401 counted against the address as a wrong secret is, and nothing is stored.
 */
export function peerCertificateCheck(
  cas: ApiPixClientCas,
  failures: FailedAuthLimit,
  log: Logger,
): RequestHandler {
  return (req, res, next) => {
    const account = accountOf(res);
    cas.certsFor(account).then(
      (trusted) => {
        const socket = req.socket as TLSSocket;
        if (signedByOneOf(socket, trusted)) return next();
        // The issuer's name tells an operator which CA the PSP's certificate is of; it is no secret.
        log.warn(
          { brand: account.brand, issuer: socket.getPeerX509Certificate()?.issuer },
          "API Pix callback whose client certificate is not of its account's CA; 401",
        );
        failures.fail(req, res, next, new Problem(401, 'unauthorized', 'Unauthorized'));
      },
      (err) => next(err),
    );
  };
}
