import { cobTxidPattern, returnIdPattern } from './wire/schemas';

// pixflow's txids are 1 to 33 digits; the API Pix wants 26 to 35 letters and digits for a charge.
// The charge's txid is pixflow's behind a fixed prefix, padded with a letter up to 35 characters:
// padding with zeros would lose a txid's own leading zeros ("007" and "7" are two deposits), a
// letter never mixes with the digits, so the way back is exact.

const PIXFLOW_TXID = /^\d{1,33}$/;
const PREFIX = 'PF';
const PAD = 'X';
const API_PIX_TXID_LENGTH = 35;
const FROM_API_PIX = /^PFX*(\d{1,33})$/;

function assertPixflowTxid(txid: string): void {
  if (!PIXFLOW_TXID.test(txid)) throw new RangeError('a pixflow txid is 1 to 33 digits');
}

/** pixflow's txid as the API Pix charge's txid (35 letters and digits). */
export function toApiPixTxid(txid: string): string {
  assertPixflowTxid(txid);
  const mapped = PREFIX + PAD.repeat(API_PIX_TXID_LENGTH - PREFIX.length - txid.length) + txid;
  // The pattern is the spec's; a change above that broke it must fail here, not at the PSP.
  if (!cobTxidPattern.test(mapped)) throw new RangeError(`mapped txid ${mapped} breaks the API Pix pattern`);
  return mapped;
}

/** The pixflow txid behind an API Pix txid; undefined for a txid pixflow did not make. */
export function fromApiPixTxid(apiTxid: string): string | undefined {
  if (apiTxid.length !== API_PIX_TXID_LENGTH) return undefined;
  return FROM_API_PIX.exec(apiTxid)?.[1];
}

/**
 * The id of the `n`th return pixflow asks of a deposit (1 for the first): the txid, a letter, and
 * `n`, within the spec's 35 letters and digits. The same deposit and `n` always give the same id,
 * so asking again is asking once.
 */
export function returnIdFor(txid: string, n = 1): string {
  assertPixflowTxid(txid);
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError('a return number is a positive integer');
  const id = `${txid}D${n}`;
  if (!returnIdPattern.test(id)) {
    throw new RangeError(`return ${n} of txid ${txid} does not fit the API Pix's 35 characters`);
  }
  return id;
}
