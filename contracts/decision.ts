// A decision that moves money or decides a person (four eyes on a payout, a held deposit's
// resolution, a completed deposit's return, an onboarding's review) counts only when it names the record the authenticated
// side wrote first (db/operator-decisions.ts): the flow's worker reads that record back and
// checks it before anything changes (docs/security.md, Decisions are proven).

/** The decisions a flow takes only with a proof, by what they decide. */
export type DecisionKind =
  | 'withdrawal.decision'
  | 'deposit.resolution'
  | 'onboarding.review'
  | 'deposit.return';

/** What every proven decision carries beside its own fields: the id of its record. */
export interface DecisionProof {
  /** The operator_decisions row the API or back office wrote; absent: a bare assertion, refused. */
  decisionId?: string;
}

/** What the flow asks its worker to check: the record names this flow, this kind, this decision. */
export interface DecisionClaim extends DecisionProof {
  kind: DecisionKind;
  /** The operator the decision names, lower-cased. */
  operator: string;
  decision: string;
  reason?: string | undefined;
}

/** Why a decision was refused: no record named, none found, one for something else, or used. */
export type DecisionRefusal = 'unproven' | 'unknown' | 'mismatch' | 'replayed';

export type DecisionCheck = { proven: true } | { proven: false; cause: DecisionRefusal };

/** The update's failure (and what the back office shows) when a decision is not proven. */
export const DECISION_NOT_PROVEN = 'the decision is not one pixflow recorded for this flow';
/** Failure type of an update refused for want of a proof. */
export const DECISION_REFUSED = 'DecisionRefused';
