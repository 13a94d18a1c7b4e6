-- Up Migration
-- The back office speaks Brazilian Portuguese unless an operator chooses English: the choice is
-- kept with the operator, so it follows them to any browser and API process. Not one of the
-- columns whose change ends their sessions (migration operator_sessions).
ALTER TABLE operators
  ADD COLUMN language text NOT NULL DEFAULT 'pt-BR' CHECK (language IN ('pt-BR', 'en'));

-- Operators find a deposit or a withdrawal by its end-to-end id (E2E), which the flows row keeps
-- in details once the provider gave one (empty or absent before).
CREATE INDEX flows_e2e_id_idx ON flows ((details->>'e2eId')) WHERE details->>'e2eId' <> '';

-- Down Migration
DROP INDEX flows_e2e_id_idx;
ALTER TABLE operators DROP COLUMN language;
