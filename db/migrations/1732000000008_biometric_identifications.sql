-- Up Migration
-- A flow of its own per biometric identification of an approved person.
ALTER TABLE flows DROP CONSTRAINT flows_type_check;
ALTER TABLE flows ADD CONSTRAINT flows_type_check
  CHECK (type IN ('onboarding', 'deposit', 'withdrawal', 'biometrics'));

-- One row per identification (a run of biometrics-<hash>): when its link was issued and how it
-- ended. The person is the keyed CPF hash, never the CPF.
CREATE TABLE biometric_identifications (
  workflow_id    text NOT NULL,
  run_id         text NOT NULL,
  cpf_hash       text NOT NULL,
  link_issued_at timestamptz,
  -- passed, failed, expired or unavailable; null while the identification runs.
  outcome        text CHECK (outcome IN ('passed', 'failed', 'expired', 'unavailable')),
  reason         text,
  finished_at    timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (workflow_id, run_id)
);
CREATE INDEX biometric_identifications_cpf_idx ON biometric_identifications (cpf_hash, created_at DESC);

-- Down Migration
DROP TABLE biometric_identifications;
DELETE FROM flows WHERE type = 'biometrics';
ALTER TABLE flows DROP CONSTRAINT flows_type_check;
ALTER TABLE flows ADD CONSTRAINT flows_type_check CHECK (type IN ('onboarding', 'deposit', 'withdrawal'));
