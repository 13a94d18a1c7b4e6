import { createHmac } from 'node:crypto';

/**
 * Keyed hash of a CPF: stable, so flows of one person can be found (the onboarding's workflow
 * id is built from it), but not reversible by a table of all CPFs.
 */
export function cpfHash(cpf: string, key: string): string {
  return createHmac('sha256', key).update(cpf.replace(/\D/g, '')).digest('hex').slice(0, 32);
}
