import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

// The test certificates of an API Pix PSP and of the merchant that calls it, made with the
// machine's openssl (nothing is downloaded). Two authorities, as in real life:
//
// <dir>/psp-ca/          ca.pem, ca.key          the PSP's CA: it signs everything the PSP trusts
// <dir>/psp-server/      cert.pem, key.pem       the PSP's API listener (localhost, 127.0.0.1)
// <dir>/merchant/        cert.pem, key.pem       what pixflow presents to the PSP (client auth)
// <dir>/psp-webhook/     cert.pem, key.pem       what the PSP presents when it posts a webhook
// <dir>/pixflow-ca/      ca.pem, ca.key          pixflow's own CA, for its ingress listener
// <dir>/pixflow-ingress/ cert.pem, key.pem       pixflow's TLS listener the PSP posts webhooks to
//
// Made once, then kept: a file is made again only when missing, near its end, or not signed by
// the CA beside it (a new CA re-issues its leaves).

const SERVER_ALT_NAMES = 'DNS:localhost,IP:127.0.0.1';
const CA_DAYS = 3650;
const LEAF_DAYS = 825;
/** A leaf that ends within this many seconds is made again. */
const RENEW_BEFORE_S = 30 * 24 * 3600;

export interface CertFiles {
  cert: string;
  key: string;
}

export interface ApiPixPki {
  dir: string;
  pspCa: CertFiles;
  pspServer: CertFiles;
  merchantClient: CertFiles;
  pspWebhookClient: CertFiles;
  pixflowCa: CertFiles;
  pixflowIngress: CertFiles;
}

export function apiPixPkiFiles(dir: string): ApiPixPki {
  const leaf = (sub: string): CertFiles => ({
    cert: path.join(dir, sub, 'cert.pem'),
    key: path.join(dir, sub, 'key.pem'),
  });
  const ca = (sub: string): CertFiles => ({
    cert: path.join(dir, sub, 'ca.pem'),
    key: path.join(dir, sub, 'ca.key'),
  });
  return {
    dir,
    pspCa: ca('psp-ca'),
    pspServer: leaf('psp-server'),
    merchantClient: leaf('merchant'),
    pspWebhookClient: leaf('psp-webhook'),
    pixflowCa: ca('pixflow-ca'),
    pixflowIngress: leaf('pixflow-ingress'),
  };
}

function openssl(args: string[]): void {
  try {
    execFileSync('openssl', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`openssl ${args[0]} failed: ${e.stderr?.toString().trim() || e.message}`);
  }
}

const quietly = (args: string[]): boolean => {
  try {
    execFileSync('openssl', args, { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
};

const ecKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];

/** Returns whether the CA was made now (its leaves must then be made again). */
function ensureCa(ca: CertFiles, name: string): boolean {
  if (
    existsSync(ca.cert) &&
    existsSync(ca.key) &&
    quietly(['x509', '-checkend', '0', '-noout', '-in', ca.cert])
  )
    return false;
  mkdirSync(path.dirname(ca.cert), { recursive: true, mode: 0o700 });
  openssl(
    ['req', '-x509', ...ecKey, '-keyout', ca.key, '-out', ca.cert, '-days', String(CA_DAYS), '-sha256']
      .concat(['-subj', `/CN=${name}`])
      .concat(['-addext', 'basicConstraints=critical,CA:TRUE,pathlen:0'])
      .concat(['-addext', 'keyUsage=critical,keyCertSign,cRLSign']),
  );
  chmodSync(ca.key, 0o600);
  return true;
}

function leafCurrent(leaf: CertFiles, ca: CertFiles): boolean {
  return (
    existsSync(leaf.cert) &&
    existsSync(leaf.key) &&
    quietly(['x509', '-checkend', String(RENEW_BEFORE_S), '-noout', '-in', leaf.cert]) &&
    quietly(['verify', '-CAfile', ca.cert, leaf.cert])
  );
}

const randomSerial = () => execFileSync('openssl', ['rand', '-hex', '16'], { encoding: 'utf8' }).trim();

function issue(ca: CertFiles, leaf: CertFiles, commonName: string, usage: 'server' | 'client'): void {
  mkdirSync(path.dirname(leaf.cert), { recursive: true, mode: 0o700 });
  const ext = `${leaf.cert}.ext`;
  const csr = `${leaf.cert}.csr`;
  const extensions =
    'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\n' +
    (usage === 'server'
      ? `extendedKeyUsage=serverAuth\nsubjectAltName=${SERVER_ALT_NAMES}\n`
      : 'extendedKeyUsage=clientAuth\n');
  writeFileSync(ext, extensions);
  try {
    openssl(['req', '-new', ...ecKey, '-keyout', leaf.key, '-out', csr, '-subj', `/CN=${commonName}`]);
    chmodSync(leaf.key, 0o600);
    openssl(
      [
        'x509',
        '-req',
        '-in',
        csr,
        '-CA',
        ca.cert,
        '-CAkey',
        ca.key,
        '-set_serial',
        `0x${randomSerial()}`,
      ].concat(['-days', String(LEAF_DAYS), '-sha256', '-extfile', ext, '-out', leaf.cert]),
    );
  } finally {
    rmSync(ext, { force: true });
    rmSync(csr, { force: true });
  }
}

function ensureLeaf(
  ca: CertFiles,
  caRenewed: boolean,
  leaf: CertFiles,
  name: string,
  usage: 'server' | 'client',
): void {
  if (caRenewed || !leafCurrent(leaf, ca)) issue(ca, leaf, name, usage);
  chmodSync(leaf.key, 0o600);
}

/**
 * The PSP's CA with its server, merchant and webhook client certificates, and pixflow's CA with
 * its ingress certificate, in `dir`: each made only when missing or no longer good. Keys are
 * 0600, folders 0700. Needs `openssl` on PATH.
 */
export function makeApiPixPki(dir: string): ApiPixPki {
  const files = apiPixPkiFiles(dir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const pspRenewed = ensureCa(files.pspCa, 'Sandbox PSP CA');
  ensureLeaf(files.pspCa, pspRenewed, files.pspServer, 'localhost', 'server');
  ensureLeaf(files.pspCa, pspRenewed, files.merchantClient, 'pixflow merchant', 'client');
  ensureLeaf(files.pspCa, pspRenewed, files.pspWebhookClient, 'Sandbox PSP webhooks', 'client');
  const pixflowRenewed = ensureCa(files.pixflowCa, 'pixflow ingress CA');
  ensureLeaf(files.pixflowCa, pixflowRenewed, files.pixflowIngress, 'localhost', 'server');
  for (const ca of [files.pspCa, files.pixflowCa]) chmodSync(ca.key, 0o600);
  return files;
}
