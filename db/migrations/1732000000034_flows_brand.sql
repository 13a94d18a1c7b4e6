-- Up Migration
-- The brand each deposit and withdrawal belongs to (docs/brands.md): a key reads and lists only
-- its brand's flows. Every row written before brands is the default brand's, and so is a row a
-- previous version writes during a rolling upgrade (the column's default), so a single-brand
-- install sets nothing new. Onboardings and biometrics stay install-wide for now: theirs is
-- always the default.
ALTER TABLE flows ADD COLUMN brand_id text NOT NULL DEFAULT 'default' REFERENCES brands (id);
-- GET /v1/flows: one brand's rows, newest first, in the keyset order of its cursor.
CREATE INDEX flows_brand_created_idx ON flows (brand_id, created_at DESC, workflow_id DESC);

-- Down Migration
DROP INDEX flows_brand_created_idx;
ALTER TABLE flows DROP COLUMN brand_id;
