-- Up Migration
-- The destinations each person has been paid to: a payout to a registered account not in this
-- table is the first one to it, and waits for a biometric identification. Keyed hashes only.
CREATE TABLE payout_destinations (
  cpf_hash              text NOT NULL,
  payee_hash            text NOT NULL,
  first_sent_at         timestamptz NOT NULL DEFAULT now(),
  first_transaction_id  text NOT NULL,
  PRIMARY KEY (cpf_hash, payee_hash)
);

-- A person's withdrawals of a day are summed for the daily limit on every payout.
CREATE INDEX flows_withdrawals_by_person ON flows (cpf_hash, created_at) WHERE type = 'withdrawal';

-- Down Migration
DROP INDEX flows_withdrawals_by_person;
DROP TABLE payout_destinations;
