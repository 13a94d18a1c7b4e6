import { createHmac } from 'node:crypto';
import { workflowIds } from '../workflows/definitions';

/** Keyed hash of a CPF: stable, so flows of one person can be found, but not reversible by a table of all CPFs. */
export function cpfHash(cpf: string, key: string): string {
  return createHmac('sha256', key).update(cpf.replace(/\D/g, '')).digest('hex').slice(0, 32);
}

/** `onboarding-<keyed hash of the CPF>`: one flow per person, no CPF in Temporal. */
export function onboardingWorkflowId(cpf: string, key: string): string {
  return workflowIds.onboarding(cpfHash(cpf, key));
}
