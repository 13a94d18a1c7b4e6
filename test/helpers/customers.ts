import { payeeHashOf } from '../../activities/withdrawal-rules';
import { maskCpf } from '../../common/mask';
import { accountKeyHash, cpfHash } from '../../common/pii';
import type { WithdrawalInput } from '../../contracts/withdrawal';
import { recordKycFacts } from '../../db/customers';
import { recordPayoutDestination } from '../../db/payout-destinations';
import type { Pool } from '../../db/pool';

/**
 * The brands that met the person, as an onboarding at each leaves them (docs/brands.md, "People a
 * brand knows"): these, or every brand there is now.
 */
async function meetAt(pool: Pool, hash: string, brands?: readonly string[]) {
  await pool.query(
    `INSERT INTO customer_brands (cpf_hash, brand_id)
     SELECT $1, id FROM brands WHERE $2::text[] IS NULL OR id = ANY($2::text[])
     ON CONFLICT DO NOTHING`,
    [hash, brands ? [...brands] : null],
  );
}

/**
 * For workflow tests about what happens after the money rules: the person's onboarding approved,
 * a fresh regular KYC answer, and the payee one they have been paid to before, as Postgres holds
 * them after a real onboarding and payout (the API tests go through those flows themselves),
 * met by `brands` (every brand there is now when none are named).
 */
export async function verifiedWithKnownPayee(
  pool: Pool,
  piiKey: string,
  input: WithdrawalInput,
  brands?: readonly string[],
) {
  const hash = cpfHash(input.client.cpf, piiKey);
  await meetAt(pool, hash, brands);
  const masked = maskCpf(input.client.cpf);
  const at = new Date();
  await pool.query(
    `INSERT INTO customers (cpf_hash, cpf_masked, verification, verification_at, verification_by)
     VALUES ($1, $2, 'approved', $3, 'test fixture')
     ON CONFLICT (cpf_hash) DO UPDATE SET verification = 'approved', verification_at = $3`,
    [hash, masked, at],
  );
  await recordKycFacts(pool, {
    cpfHash: hash,
    cpfMasked: masked,
    facts: { status: 'regular', under18: false, deceased: false, restricted: false, pep: false },
    readAt: at,
  });
  const payeeHash = payeeHashOf(input, (k) => accountKeyHash(k, piiKey));
  await pool.query(
    `INSERT INTO customer_accounts (cpf_hash, kind, pix_type, key_hash, masked, source)
     VALUES ($1, 'pix_key', $2, $3, '***', 'api') ON CONFLICT DO NOTHING`,
    [hash, input.pixType, payeeHash],
  );
  await recordPayoutDestination(pool, { cpfHash: hash, payeeHash, transactionId: 'earlier-payout' });
}

/**
 * For workflow tests about what happens after a deposit's rules: the person's onboarding
 * approved, as Postgres holds it after a real one (the API tests onboard people themselves), met
 * by `brands` (every brand there is now when none are named).
 */
export async function verifiedDepositor(pool: Pool, piiKey: string, cpf: string, brands?: readonly string[]) {
  await meetAt(pool, cpfHash(cpf, piiKey), brands);
  await pool.query(
    `INSERT INTO customers (cpf_hash, cpf_masked, verification, verification_at, verification_by)
     VALUES ($1, $2, 'approved', now(), 'test fixture')
     ON CONFLICT (cpf_hash) DO UPDATE SET verification = 'approved', verification_at = now()`,
    [cpfHash(cpf, piiKey), maskCpf(cpf)],
  );
}
