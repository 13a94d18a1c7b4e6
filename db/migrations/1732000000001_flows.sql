-- Up Migration
-- One row per flow, written by the flows' idempotent recordFlow activity; read by GET /v1/flows.
CREATE TABLE flows (
  workflow_id     text PRIMARY KEY,
  type            text NOT NULL CHECK (type IN ('onboarding', 'deposit', 'withdrawal')),
  business_id     text NOT NULL,
  status          text NOT NULL,
  -- Never the whole CPF: a keyed hash to filter by, and the masked form to show.
  cpf_hash        text,
  cpf_masked      text,
  merchant        text,
  amount_centavos bigint,
  reason          text,
  details         jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Monotonic per flow: a retried or late write of an older state never overwrites a newer one.
  seq             integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX flows_type_status_idx ON flows (type, status, created_at DESC);
CREATE INDEX flows_cpf_hash_idx ON flows (cpf_hash, created_at DESC);
CREATE INDEX flows_created_idx ON flows (created_at DESC, workflow_id DESC);

-- Down Migration
DROP TABLE flows;
