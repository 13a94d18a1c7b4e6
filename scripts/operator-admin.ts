import { z } from 'zod';
import { operatorForSignIn } from '../db/operators';
import type { Pool } from '../db/pool';

/** What an admin's change is recorded under, as the CLI's `--as` names them. */
export interface AdminActor {
  operatorId: number;
  operatorEmail: string;
  operatorRole: string;
}

/** Why `--as` names no one who may change the policy or the brands. */
export const NOT_AN_ADMIN = (email: string) =>
  `${email} is not an enabled admin operator (npm run operator -- create ... --role admin)`;

/** The enabled admin operator of this address; undefined when there is none. */
export async function enabledAdmin(pool: Pool, email: string): Promise<AdminActor | undefined> {
  const o = (await operatorForSignIn(pool, email))?.operator;
  if (!o || o.disabled || o.role !== 'admin') return undefined;
  return { operatorId: o.id, operatorEmail: o.email, operatorRole: o.role };
}

/** `--as`: the address of the admin a change is made as. */
export const adminEmail = z.email({ error: 'must be the email address of an admin operator' });

/** Bad input to the brand commands: the option it names, and what is wrong with it (exit 2). */
export class BrandInputError extends Error {
  constructor(
    readonly field: string,
    readonly problem: string,
  ) {
    super(`${field}: ${problem}`);
  }
}

/** The admin --as names: an enabled operator with the admin role, as the audit trail names them. */
export async function adminActor(pool: Pool, email: string): Promise<AdminActor> {
  const admin = await enabledAdmin(pool, email);
  if (!admin) throw new BrandInputError('--as', NOT_AN_ADMIN(email));
  return admin;
}
