import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// A private certificate authority for one Temporal server and its clients, made with the
// machine's openssl: the server requires a certificate of this CA from every client (mutual TLS),
// and its clients trust only this CA for the server. `npm start -- --temporal postgres` makes one
// per data folder; scripts/make-temporal-certs.ts makes one for docker-compose.yml.
//
// <dir>/ca/      ca.pem, ca.key    the authority; its key signs, and is never mounted anywhere
// <dir>/server/  ca.pem, server.pem, server.key   the server's (also its own client, between its services)
// <dir>/client/  ca.pem, client.pem, client.key   pixflow's worker and API, the CLI, the UI

/** The name the server's certificate is for, and that every client checks: compose's service name. */
export const TEMPORAL_TLS_SERVER_NAME = 'temporal';
/** Where else clients may reach it: this machine's loopback (npm start, and compose's published port). */
const SERVER_ALT_NAMES = `DNS:${TEMPORAL_TLS_SERVER_NAME},DNS:localhost,IP:127.0.0.1,IP:::1`;
const CA_DAYS = 3650;
const LEAF_DAYS = 825;
/** A leaf certificate that ends within this many seconds is made again at the next start. */
const RENEW_BEFORE_S = 30 * 24 * 3600;

export interface TemporalTlsFiles {
  dir: string;
  ca: { cert: string; key: string };
  server: { ca: string; cert: string; key: string };
  client: { ca: string; cert: string; key: string };
}

export function temporalTlsFiles(dir: string): TemporalTlsFiles {
  return {
    dir,
    ca: { cert: path.join(dir, 'ca', 'ca.pem'), key: path.join(dir, 'ca', 'ca.key') },
    server: {
      ca: path.join(dir, 'server', 'ca.pem'),
      cert: path.join(dir, 'server', 'server.pem'),
      key: path.join(dir, 'server', 'server.key'),
    },
    client: {
      ca: path.join(dir, 'client', 'ca.pem'),
      cert: path.join(dir, 'client', 'client.pem'),
      key: path.join(dir, 'client', 'client.key'),
    },
  };
}

function openssl(args: string[]) {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString().trim() || e.message}`);
  }
}

/** Still valid for RENEW_BEFORE_S, and signed by the CA at hand (a new CA re-issues every leaf). */
function leafCurrent(cert: string, ca: string): boolean {
  if (!existsSync(cert)) return false;
  try {
    execFileSync('openssl', ['x509', '-checkend', String(RENEW_BEFORE_S), '-noout', '-in', cert], {
      stdio: 'ignore',
    });
    execFileSync('openssl', ['verify', '-CAfile', ca, cert], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function issue(files: TemporalTlsFiles, cert: string, key: string, subject: string, extensions: string) {
  const ext = `${cert}.ext`;
  const csr = `${cert}.csr`;
  writeFileSync(ext, extensions);
  try {
    openssl(
      ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'].concat([
        '-keyout',
        key,
        '-out',
        csr,
        '-subj',
        subject,
      ]),
    );
    chmodSync(key, 0o600);
    openssl(
      ['x509', '-req', '-in', csr, '-CA', files.ca.cert, '-CAkey', files.ca.key, '-set_serial'].concat([
        `0x${randomSerial()}`,
        '-days',
        String(LEAF_DAYS),
        '-sha256',
        '-extfile',
        ext,
        '-out',
        cert,
      ]),
    );
  } finally {
    rmSync(ext, { force: true });
    rmSync(csr, { force: true });
  }
}

const randomSerial = () => execFileSync('openssl', ['rand', '-hex', '16'], { encoding: 'utf8' }).trim();

/**
 * The CA, the server's and the client's certificates in `dir`, each made only if missing (or a
 * leaf near its end, or not signed by the CA there): made once, then kept. Keys are 0600, the
 * folders 0700. Needs `openssl` on PATH.
 */
export function ensureTemporalCerts(dir: string): TemporalTlsFiles {
  const files = temporalTlsFiles(dir);
  for (const sub of ['ca', 'server', 'client'])
    mkdirSync(path.join(dir, sub), { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  if (!existsSync(files.ca.cert) || !existsSync(files.ca.key)) {
    openssl(
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes']
        .concat(['-keyout', files.ca.key, '-out', files.ca.cert, '-days', String(CA_DAYS), '-sha256'])
        .concat([
          '-subj',
          '/CN=pixflow Temporal CA',
          '-addext',
          'basicConstraints=critical,CA:TRUE,pathlen:0',
        ])
        .concat(['-addext', 'keyUsage=critical,keyCertSign,cRLSign']),
    );
    chmodSync(files.ca.key, 0o600);
  }
  const leaf = 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n';
  if (!leafCurrent(files.server.cert, files.ca.cert)) {
    // Client auth too: the server's services present it to each other and to its frontend.
    issue(
      files,
      files.server.cert,
      files.server.key,
      `/CN=${TEMPORAL_TLS_SERVER_NAME}`,
      `${leaf}extendedKeyUsage=serverAuth,clientAuth\nsubjectAltName=${SERVER_ALT_NAMES}\n`,
    );
  }
  if (!leafCurrent(files.client.cert, files.ca.cert)) {
    issue(files, files.client.cert, files.client.key, '/CN=pixflow', `${leaf}extendedKeyUsage=clientAuth\n`);
  }
  // Each side's folder holds the CA certificate it checks the other side with.
  for (const copy of [files.server.ca, files.client.ca]) writeFileSync(copy, readCa(files));
  for (const key of [files.server.key, files.client.key]) chmodSync(key, 0o600);
  return files;
}

const readCa = (files: TemporalTlsFiles) =>
  execFileSync('openssl', ['x509', '-in', files.ca.cert], { encoding: 'utf8' });

/** The client side as the temporal CLI takes it, and as pixflow's TEMPORAL_TLS_* settings name it. */
export interface TemporalClientTls {
  ca: string;
  cert: string;
  key: string;
  serverName: string;
}

export const clientTlsOf = (files: TemporalTlsFiles): TemporalClientTls => ({
  ...files.client,
  serverName: TEMPORAL_TLS_SERVER_NAME,
});

/** pixflow's settings for a client with these credentials (common/config.ts). */
export function clientTlsEnv(tls: TemporalClientTls): Record<string, string> {
  return {
    TEMPORAL_TLS: 'true',
    TEMPORAL_TLS_CA_PATH: tls.ca,
    TEMPORAL_TLS_CERT_PATH: tls.cert,
    TEMPORAL_TLS_KEY_PATH: tls.key,
    TEMPORAL_TLS_SERVER_NAME: tls.serverName,
  };
}
