-- Up Migration
-- Responsible-gaming deposit limits a person sets on their own deposits, one row per period
-- (America/Sao_Paulo day, ISO week, month). A lower limit applies at once; a higher one, or none,
-- waits for the cooling-off as the pending change, and applies from pending_applies_at on with
-- nothing running: readers take it as the limit from then, and the next change folds it in.
CREATE TABLE deposit_limits (
  cpf_hash            text NOT NULL REFERENCES customers (cpf_hash),
  period              text NOT NULL CHECK (period IN ('daily', 'weekly', 'monthly')),
  -- NULL: no limit.
  limit_centavos      bigint CHECK (limit_centavos >= 0),
  -- The pending change: its limit (NULL: removing it) and when it applies; both NULL when none.
  pending_centavos    bigint CHECK (pending_centavos >= 0),
  pending_applies_at  timestamptz,
  updated_at          timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (cpf_hash, period),
  CHECK (pending_centavos IS NULL OR pending_applies_at IS NOT NULL)
);

-- A deposit checked against its person's limits, counted from the check (under a lock of the
-- person's row) until its flows row exists, whose status counts from then on. A reservation whose
-- deposit never wrote a row (the API stopped before starting it) stops counting after a grace.
CREATE TABLE deposit_limit_reservations (
  workflow_id      text PRIMARY KEY,
  cpf_hash         text NOT NULL,
  amount_centavos  bigint NOT NULL,
  created_at       timestamptz NOT NULL
);
CREATE INDEX deposit_limit_reservations_by_person ON deposit_limit_reservations (cpf_hash, created_at);

-- Down Migration
DROP TABLE deposit_limit_reservations;
DROP TABLE deposit_limits;
