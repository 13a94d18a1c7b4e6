-- Up Migration
-- The brand each API key acts for (docs/brands.md): a brand key acts for its brand alone; a
-- platform key (brand_id NULL, only ever made explicitly) names the brand it acts for on each
-- request. Every key made before brands existed becomes the default brand's, and so does a key a
-- previous version inserts during a rolling upgrade (the column's default), so a single-brand
-- install keeps working with no new setting.
ALTER TABLE api_keys ADD COLUMN brand_id text DEFAULT 'default' REFERENCES brands (id);

-- Down Migration
ALTER TABLE api_keys DROP COLUMN brand_id;
