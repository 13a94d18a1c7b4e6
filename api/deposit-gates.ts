import { type Screening, screenerOf, screenPerson } from '../activities/screen-person';
import { maskCpf } from '../common/mask';
import { formatBrl } from '../common/money';
import { cpfHash } from '../common/pii';
import type { CustomerVerification } from '../contracts/customer';
import { type DepositInput, depositWorkflowId, NOT_VERIFIED } from '../contracts/deposit';
import { CLOSED, DEPOSIT_LIMIT_EXCEEDED, IMPEDED } from '../contracts/rules';
import { reserveWithinDepositLimits } from '../customers/deposit-limits';
import { type DepositStanding, depositStandingOfHash, isClosed } from '../db/eligibility';
import { Problem } from '../http/problem';
import type { FlowStarter } from './deps';

// What a new deposit must pass before anything is created: the person verified, not named by the
// registry of impeded people nor closed, and within the limits they set (docs/rules.md).
/** How a person whose verification is not `approved` gets there. */
const toBeVerified: Record<Exclude<CustomerVerification, 'approved'>, string> = {
  none: 'pixflow has no onboarding of this person: onboard them (POST /v1/onboardings) and have it approved',
  pending: 'their onboarding is still running: a deposit can be made once it is approved',
  rejected: 'their onboarding was rejected: deposits need an approved one',
  expired:
    'their onboarding expired before it was approved: start it again (POST /v1/onboardings) and have it approved',
  suspended:
    "their verification is suspended (the provider contradicted the onboarding's outcome) until an operator decides",
};

/** 409: the rule that only a verified person deposits (REQUIRE_VERIFIED_FOR_DEPOSITS). */
const notVerified = (verification: Exclude<CustomerVerification, 'approved'>) =>
  new Problem(
    409,
    'not-verified',
    'The person is not verified',
    `the person's verification is ${verification}; ${toBeVerified[verification]}`,
    { reason: NOT_VERIFIED, verification },
  );

/** The person as the deposit's rules need them, read once for all of them. */
export function depositStandingOf({ config, pool }: FlowStarter, cpf: string): Promise<DepositStanding> {
  return depositStandingOfHash(pool, cpfHash(cpf, config.PII_HASH_KEY));
}

/**
 * Only a verified person starts a deposit: read from the customer row before anything is
 * created at the provider or in Temporal. The rule is about starting one: a deposit that already
 * exists for the txid is answered as before (the same request gets its QR, another one its
 * conflict), whatever the person's verification became since.
 */
export async function refuseUnverified(
  { config }: FlowStarter,
  standing: DepositStanding,
  isRepeat: () => Promise<boolean>,
) {
  if (!config.REQUIRE_VERIFIED_FOR_DEPOSITS) return;
  const verification = (standing.verification ?? 'none') as CustomerVerification;
  if (verification === 'approved') return;
  if (await isRepeat()) return;
  throw notVerified(verification);
}

/**
 * A new deposit within the limits the person set on their own deposits, its amount reserved
 * against them (customers/deposit-limits.ts); refused with what is left per period, and nothing
 * created, when it would pass one. A person who never set one has nothing to reserve.
 */
export async function refuseOverDepositLimits(
  { config, pool }: FlowStarter,
  input: DepositInput,
  standing: DepositStanding,
) {
  if (!standing.hasDepositLimits) return;
  const verdict = await reserveWithinDepositLimits(pool, {
    cpfHash: cpfHash(input.client.cpf, config.PII_HASH_KEY),
    cpfMasked: maskCpf(input.client.cpf),
    workflowId: depositWorkflowId(input.txid),
    amountCentavos: input.amountCentavos,
    now: new Date(),
  });
  if (verdict.fits) return;
  const left = Object.entries(verdict.remainingCentavos)
    .map(([period, centavos]) => `${period} ${formatBrl(centavos)}`)
    .join(', ');
  throw new Problem(
    409,
    'deposit-limit-exceeded',
    "Over the person's deposit limit",
    `a deposit of ${formatBrl(input.amountCentavos)} would pass the person's own ${verdict.exceeded.join(', ')} deposit limit; left: ${left}`,
    {
      reason: DEPOSIT_LIMIT_EXCEEDED,
      exceeded: verdict.exceeded,
      remainingCentavos: verdict.remainingCentavos,
    },
  );
}

/** 409: the registry of impeded people bars the person from betting (docs/rules.md, Eligibility). */
const impeded = (s: Extract<Screening, { status: 'impeded' }>) =>
  new Problem(
    409,
    'impeded',
    'The person is impeded from betting',
    `the registry of impeded people names this person (${s.reason}${s.until ? ` until ${s.until}` : ''}): no deposit can be taken; withdrawals of their balance to their own account go on`,
    { reason: IMPEDED, impeded: { reason: s.reason, since: s.since, until: s.until } },
  );

/** 503: the registry gave no answer, and a deposit is not taken unscreened (ELIGIBILITY_FAIL_CLOSED). */
const ELIGIBILITY_RETRY_AFTER_S = 30;
const eligibilityUnavailable = () =>
  new Problem(
    503,
    'eligibility-unavailable',
    'The registry of impeded people cannot be reached',
    'the eligibility registry did not answer, and no deposit is taken without its check: nothing was created; ask again after Retry-After',
    {},
    ELIGIBILITY_RETRY_AFTER_S,
  );

/** 409: an operator closed the account of this impeded person (docs/rules.md, Eligibility). */
const closed = () =>
  new Problem(
    409,
    'customer-closed',
    "The person's account is closed",
    'an operator closed this account because the registry of impeded people named the person: no deposit can be taken until an operator reinstates them; withdrawals of their balance to their own account go on',
    { reason: CLOSED },
  );

/**
 * Only a person the registry of impeded people does not name starts a deposit: asked (or its
 * fresh answer reused) before anything is created. A person an operator closed is refused as
 * closed, whatever the registry says; it is still asked, so its latest answer is there when an
 * operator comes to reinstate them. As with verification, a deposit that exists for the txid is
 * answered as before, whatever the registry says.
 */
export async function refuseImpeded(
  deps: FlowStarter,
  cpf: string,
  standing: DepositStanding,
  isRepeat: () => Promise<boolean>,
) {
  const { config, pool } = deps;
  const screener = screenerOf(config, pool);
  const screening: Screening = screener
    ? await screenPerson(screener, cpf, 'deposit', new Date(), { last: standing.eligibility })
    : { status: 'eligible' };
  // Only an impeded person is ever closed, and an impediment stays recorded until reinstated: a
  // passing screening needs no second read.
  const isShut = screening.status !== 'eligible' && (await isClosed(pool, cpfHash(cpf, config.PII_HASH_KEY)));
  if (!isShut && screening.status === 'eligible') return;
  if (!isShut && screening.status === 'unavailable' && !config.ELIGIBILITY_FAIL_CLOSED) return;
  // Looked up only for a refusal: most deposits pass, and cost Temporal no extra call.
  if (await isRepeat()) return;
  if (isShut) throw closed();
  throw screening.status === 'impeded' ? impeded(screening) : eligibilityUnavailable();
}
