import { hash, verify } from '@node-rs/argon2';

// Operators' passwords: argon2id with the library's defaults (OWASP's minimum: 19 MiB, 2 passes).

export const MIN_PASSWORD_LENGTH = 12;

export function hashPassword(password: string): Promise<string> {
  return hash(password);
}

/**
 * A hash checked against when the address is unknown, so both answers take as long; made at the
 * first sign-in, not when a process that never signs anyone in loads this file.
 */
let decoy: Promise<string> | undefined;

/** Whether the password matches; with no stored hash, false after the same work as a real check. */
export async function passwordMatches(stored: string | undefined, password: string): Promise<boolean> {
  decoy ??= hash('pixflow-decoy-password');
  const ok = await verify(stored ?? (await decoy), password).catch(() => false);
  return stored !== undefined && ok;
}
