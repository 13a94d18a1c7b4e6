-- Up Migration
-- Reconciliation: the flows waiting for the provider (a deposit for its payment, a payout for its
-- outcome) are looked up by one rate-limited sweep instead of a timer in every workflow. Each
-- row counts its checks and says when it is due again; until its first check it is due one step
-- of the schedule after it started waiting (updated_at).
ALTER TABLE flows ADD COLUMN checks integer NOT NULL DEFAULT 0;
ALTER TABLE flows ADD COLUMN next_check_at timestamptz;
CREATE INDEX flows_awaiting_provider_idx ON flows (updated_at)
  WHERE (type = 'deposit' AND status = 'awaiting_payment') OR (type = 'withdrawal' AND status = 'processing');

-- Down Migration
DROP INDEX flows_awaiting_provider_idx;
ALTER TABLE flows DROP COLUMN next_check_at;
ALTER TABLE flows DROP COLUMN checks;
