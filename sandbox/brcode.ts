import { createHash } from 'node:crypto';
import { createStaticPix, hasError } from 'pix-utils';
import { centavosToDecimal } from '../common/money';

// Pix BR Code (EMV QRCPS-MPM) for a deposit, built with pix-utils: payload format, merchant account
// (GUI br.gov.bcb.pix + the merchant's key), MCC, currency 986, amount, country, merchant name/city,
// additional data (62-05 reference) and CRC16.
//
// Sandbox choice: EMV field 62-05 holds at most 25 characters, but deposit txids may have 33 digits.
// A txid of up to 25 characters goes in as is; a longer one is replaced by a 25-character reference
// (`brCodeReference`) derived from it. The sandbox's own txid stays the deposit's identifier.

const SANDBOX_PIX_KEY = '7d9f0335-8dcc-4054-9bf9-0dbd61d36906';

export function brCodeReference(txid: string): string {
  if (txid.length <= 25) return txid;
  return `SBX${createHash('sha256').update(txid).digest('hex').slice(0, 22).toUpperCase()}`;
}

export function buildBrCode(input: { txid: string; amountCentavos: number; merchantName: string }): string {
  const pix = createStaticPix({
    merchantName: input.merchantName.slice(0, 25),
    merchantCity: 'SAO PAULO',
    pixKey: SANDBOX_PIX_KEY,
    // Parsed from its decimal text: no arithmetic on doubles.
    transactionAmount: Number(centavosToDecimal(input.amountCentavos)),
    txid: brCodeReference(input.txid),
    infoAdicional: '',
  });
  if (hasError(pix)) throw new Error(`BR Code: ${pix.message}`);
  return pix.toBRCode();
}
