import { hash, verify } from '@node-rs/argon2';

// Operators' passwords: argon2id with the library's defaults (OWASP's minimum: 19 MiB, 2 passes).

export const MIN_PASSWORD_LENGTH = 12;

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/** A hash made once at load, checked against when the address is unknown: both answers take as long. */
const decoy = hash('pixflow-decoy-password');

/** Whether the password matches; with no stored hash, false after the same work as a real check. */
export async function passwordMatches(stored: string | undefined, password: string): Promise<boolean> {
  const ok = await verify(stored ?? (await decoy), password).catch(() => false);
  return stored !== undefined && ok;
}
