-- Up Migration
-- A person the registry of impeded people names stays impeded on their row until an operator
-- reinstates them (docs/rules.md, Eligibility): `registry_answer` keeps the registry's latest
-- answer apart from the recorded impediment, and an operator's closure is kept with who closed.
ALTER TABLE customers
  ADD COLUMN registry_answer text CHECK (registry_answer IN ('eligible', 'impeded')),
  ADD COLUMN closed_at       timestamptz,
  ADD COLUMN closed_by       text,
  ADD COLUMN closed_reason   text;
UPDATE customers SET registry_answer = eligibility WHERE eligibility IS NOT NULL;
-- The impeded queue: the impeded, oldest impediment first.
CREATE INDEX customers_impeded_idx ON customers (impeded_since) WHERE eligibility = 'impeded';

-- Down Migration
DROP INDEX customers_impeded_idx;
ALTER TABLE customers
  DROP COLUMN registry_answer,
  DROP COLUMN closed_at,
  DROP COLUMN closed_by,
  DROP COLUMN closed_reason;
