import { maskCpf } from '../../common/mask';
import { cpfHash } from '../../common/pii';
import { sealSecret } from '../../common/secret-box';
import type { Pool } from '../../db/pool';
import { TEST_PII_KEY } from './flow-env';
import { testCodecKeys } from './temporal';

// Customers for the rescreening's tests, written straight into Postgres as pixflow keeps them.

/** Customers as pixflow keeps them: keyed hash, masked and sealed CPF, last active `activeAgoMs` ago. */
export async function seedCustomers(
  pool: Pool,
  cpfs: readonly string[],
  activeAgoMs: number,
  piiKey = TEST_PII_KEY,
  keys = testCodecKeys,
) {
  for (let i = 0; i < cpfs.length; i += 500) {
    const chunk = cpfs.slice(i, i + 500);
    await pool.query(
      `INSERT INTO customers (cpf_hash, cpf_masked, cpf_sealed, verification, verification_at)
       SELECT h, m, x, 'approved', now() - $4::bigint * interval '1 millisecond'
         FROM unnest($1::text[], $2::text[], $3::text[]) AS t (h, m, x)`,
      [
        chunk.map((c) => cpfHash(c, piiKey)),
        chunk.map(maskCpf),
        chunk.map((c) => sealSecret(keys, c)),
        activeAgoMs,
      ],
    );
  }
}

/** Questions the sandbox's registry emulation answered so far. */
export const checksAsked = async (url: string) =>
  ((await (await fetch(`${url}/sandbox/eligibility`)).json()) as { checks: number }).checks;
