-- Up Migration
-- The full KYC answer stays here, not in workflow history: the workflow keeps only its decision.
CREATE TABLE kyc_records (
  workflow_id  text NOT NULL,
  plan         text NOT NULL,
  cpf_hash     text NOT NULL,
  record       jsonb NOT NULL,
  received_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workflow_id, plan)
);

-- Down Migration
DROP TABLE kyc_records;
