-- Up Migration
-- One row per person, keyed by the keyed CPF hash (never the CPF): the read model the API answers
-- and the money rules read. Written by activities only (recordFlow, checkKyc, the deposit's first
-- write) and by the ingress for a provider decision that contradicts a closed onboarding.
CREATE TABLE customers (
  cpf_hash                text PRIMARY KEY,
  cpf_masked              text NOT NULL,
  verification            text NOT NULL DEFAULT 'none'
    CHECK (verification IN ('none', 'pending', 'approved', 'rejected', 'expired', 'suspended')),
  verification_at         timestamptz,
  -- The onboarding's workflow id, or operator:<by> for an operator's decision.
  verification_by         text,
  verification_flow       text,
  -- Which run of the onboarding wrote last, and its sequence number: a late or retried write of
  -- that run never moves the state back, and an older run never overrides a newer one.
  verification_run        text,
  verification_seq        integer NOT NULL DEFAULT 0,
  kyc_status              text,
  under_18                boolean,
  deceased                boolean,
  restricted              boolean,
  pep                     boolean,
  kyc_read_at             timestamptz,
  suspended_reason        text,
  suspended_at            timestamptz,
  suspended_evidence      jsonb,
  last_biometric_at       timestamptz,
  last_biometric_outcome  text,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);

-- The person's own accounts ("conta cadastrada"): a keyed hash to match a payout's destination
-- by, and a masked form to show; never the key or account number in plain text.
CREATE TABLE customer_accounts (
  id          bigserial PRIMARY KEY,
  cpf_hash    text NOT NULL REFERENCES customers (cpf_hash),
  kind        text NOT NULL CHECK (kind IN ('pix_key', 'bank_account')),
  pix_type    text,
  key_hash    text NOT NULL,
  masked      text NOT NULL,
  source      text NOT NULL CHECK (source IN ('deposit', 'api')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  removed_at  timestamptz
);
CREATE UNIQUE INDEX customer_accounts_active_key ON customer_accounts (cpf_hash, key_hash)
  WHERE removed_at IS NULL;

-- The people pixflow already knows: each one's latest onboarding and latest KYC answer.
INSERT INTO customers (cpf_hash, cpf_masked, verification, verification_at, verification_by,
                       verification_flow, verification_seq, created_at, updated_at)
SELECT DISTINCT ON (cpf_hash) cpf_hash, cpf_masked,
       CASE WHEN status IN ('approved', 'rejected', 'expired') THEN status ELSE 'pending' END,
       updated_at, workflow_id, workflow_id, seq, created_at, updated_at
  FROM flows
 WHERE type = 'onboarding' AND cpf_hash IS NOT NULL AND cpf_masked IS NOT NULL
 ORDER BY cpf_hash, updated_at DESC;
UPDATE customers c
   SET kyc_status = COALESCE(k.record->>'status', 'null'),
       under_18 = (k.record->>'is_under_18')::boolean,
       deceased = (k.record->>'date_death') IS NOT NULL,
       restricted = (k.record->>'status') IS NOT DISTINCT FROM 'consta_lista_restritiva',
       pep = COALESCE((k.record->>'is_pep')::boolean, false),
       kyc_read_at = k.received_at
  FROM (SELECT DISTINCT ON (cpf_hash) cpf_hash, record, received_at
          FROM kyc_records ORDER BY cpf_hash, received_at DESC) k
 WHERE k.cpf_hash = c.cpf_hash;

-- Down Migration
DROP TABLE customer_accounts;
DROP TABLE customers;
