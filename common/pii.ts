import { createHmac } from 'node:crypto';

/**
 * Keyed hash of a CPF: stable, so flows of one person can be found (the onboarding's workflow
 * id is built from it), but not reversible by a table of all CPFs.
 */
export function cpfHash(cpf: string, key: string): string {
  return createHmac('sha256', key).update(cpf.replace(/\D/g, '')).digest('hex').slice(0, 32);
}

/**
 * Keyed hash of a registered account's normalised key (a Pix key, or `ispb;branch;account`): a
 * payout's destination is matched against it without the key being stored in plain text.
 */
export function accountKeyHash(normalisedKey: string, key: string): string {
  return createHmac('sha256', key).update(`account:${normalisedKey}`).digest('hex');
}
