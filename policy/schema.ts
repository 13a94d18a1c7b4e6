import { z } from 'zod';

// The rules every process decides with (docs/rules.md): one typed policy, held in Postgres and
// versioned (db/policy.ts), so the API and the worker always decide under the same version and
// each decision can say which. The environment only seeds its first version (policy/seed.ts).

const centavos = z.number().int('must be whole centavos').min(1, 'must be at least 1 centavo');
/** A bound in centavos where 0 turns its rule off. */
const centavosOrOff = z.number().int('must be whole centavos').min(0, 'must be 0 (off) or more');
const durationMs = z.number().int('must be whole milliseconds').positive('must be more than 0');
/** A window in milliseconds where 0 turns its rule off. */
const windowOrOff = z.number().int('must be whole milliseconds').min(0, 'must be 0 (off) or more');
const percent = z.number().int('must be a whole number').min(1).max(100);
/** A connector's name, as connectors/registry.ts knows it. */
const connectorName = /^[a-z0-9][a-z0-9-]{0,62}$/;

/** The routing of versions from before it was a field: every deposit to the first provider. */
const ROUTING_BEFORE = {
  connectors: ['identity-payments'],
  breaker: { failures: 5, windowMs: 60_000, coolDownMs: 30_000 },
};

export const policySchema = z.strictObject({
  deposits: z.strictObject({
    /** Only a person whose onboarding was approved starts a deposit. */
    requireVerified: z.boolean(),
    /** A paid deposit whose payer is not the person waits for an operator (`held`). */
    holdThirdParty: z.boolean(),
    /** How long a person's raised or removed deposit limit waits before it applies. */
    limitCoolingOffMs: durationMs,
    /** Which connectors make a deposit's charge, in order, and when one is skipped as down. */
    routing: z
      .strictObject({
        /** Tried in this order; one whose breaker is open is skipped for the next. */
        connectors: z
          .array(z.string().regex(connectorName, 'must be connector names: lower case, digits and -'))
          .min(1, 'must name at least one connector')
          .refine((names) => new Set(names).size === names.length, 'must name each connector once'),
        breaker: z.strictObject({
          /** Charge creations failed or timed out within the window that open the breaker. */
          failures: z.number().int('must be a whole number').min(1, 'must be at least 1'),
          /** The window those failures are counted in. */
          windowMs: durationMs,
          /** How long an open breaker skips its connector before one deposit tries it again. */
          coolDownMs: durationMs,
        }),
      })
      // Versions written before deposits were routed went to the first provider alone.
      .default(ROUTING_BEFORE),
    /** A held third party's deposit goes back to its payer by itself once its review delay passes. */
    autoReturnThirdParty: z.boolean().default(false),
    /** The review delay before that automatic return. */
    autoReturnAfterMs: durationMs.default(24 * 3_600_000),
  }),
  withdrawals: z.strictObject({
    requireVerified: z.boolean(),
    /** Payouts only to the person's own CPF key or to an account registered as theirs. */
    requireOwnPayeeAccount: z.boolean(),
    /** A person's payouts per São Paulo day. */
    dailyLimitCentavos: centavos,
    /** A withdrawal above this waits for a biometric identification; 0: none by amount. */
    stepUpAboveCentavos: centavosOrOff,
    /** The first payout to a registered account waits for a biometric identification. */
    stepUpNewAccount: z.boolean(),
    /** A KYC answer older than this is read again before money moves. */
    kycMaxAgeMs: durationMs,
  }),
  payouts: z.strictObject({
    /** A payout is due this long after the person asked for it. */
    deadlineMs: durationMs,
    /** At this share of the deadline, still open, a payout is at risk. */
    atRiskShare: z.number().gt(0, 'must be above 0').lt(1, 'must be below 1'),
    /** A payout above this waits for operators' approval (four eyes); 0: off. */
    approvalAboveCentavos: centavosOrOff,
    /** Different operators who must approve such a payout. */
    approvers: z.number().int().min(1, 'must be 1 or 2').max(2, 'must be 1 or 2'),
    /** The operator's authorization gave no valid answer: deny (refused) or approve (sent). */
    authorizationOnNoAnswer: z.enum(['deny', 'approve']),
  }),
  eligibility: z.strictObject({
    /** The registry unreachable: true refuses new deposits, false lets them through unscreened. */
    failClosed: z.boolean(),
    /** A person's answer younger than this is reused instead of asking again. */
    freshMs: durationMs,
    /** Customers active within this many days are screened again by the rescreening. */
    rescreenActiveDays: z.number().int().min(1),
    /** How long an operator has to close an impeded person's account. */
    impededCloseWithinMs: durationMs,
  }),
  alerts: z.strictObject({
    structuring: z.strictObject({
      /** Deposits just under this are counted; 0: the rule is off. */
      belowCentavos: centavosOrOff,
      bandPercent: percent,
      count: z.number().int().min(2, 'must be at least 2'),
      windowMs: durationMs,
    }),
    quickInOut: z.strictObject({
      /** A payout within this long of the deposits before it; 0: the rule is off. */
      windowMs: windowOrOff,
      sharePercent: percent,
      minCentavos: centavosOrOff,
    }),
    windowTotal: z.strictObject({
      /** A person's total moved over the window above this; 0: the rule is off. */
      aboveCentavos: centavosOrOff,
      windowMs: durationMs,
      of: z.enum(['deposits', 'withdrawals', 'each']),
    }),
    newAccount: z.strictObject({
      /** A payout within this long of the person's registration; 0: the rule is off. */
      windowMs: windowOrOff,
      minCentavos: centavosOrOff,
    }),
  }),
});

export type Policy = z.infer<typeof policySchema>;

/** The policy a decision is taken under: its version travels with the decision. */
export interface PolicyInForce {
  /** The operator's version. */
  version: number;
  policy: Policy;
  /** The brand's overrides' version laid on it (policy/brand.ts); absent: the operator's policy alone. */
  brandPolicyVersion?: number;
}

/** How a process reads the policy in force (policy/store.ts keeps it current across processes). */
export interface PolicyReader {
  /** The operator's policy, or, given a brand, that brand's: the operator's with its overrides. */
  current(brand?: string): Promise<PolicyInForce>;
}
