-- Up Migration
-- The brands that know each person (docs/brands.md, "People a brand knows"): a person's
-- verification, limits and own accounts stay the person's, shared by the brands (docs/rules.md,
-- "A person across brands"), but a brand sees a person only once it has met them, by starting an
-- onboarding for them. Keyed by the CPF's hash as customers is; no reference to customers, since
-- a brand meets a person before their onboarding writes the customer's row.
CREATE TABLE customer_brands (
  cpf_hash     text NOT NULL,
  brand_id     text NOT NULL REFERENCES brands (id),
  first_met_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (cpf_hash, brand_id)
);
-- The people a brand knows, for GET /v1/flows's filter.
CREATE INDEX customer_brands_brand_idx ON customer_brands (brand_id, cpf_hash);

-- Every person pixflow has seen so far is the default brand's, so a single-brand install sees
-- what it saw; a brand that moved money for a person knows them too.
INSERT INTO customer_brands (cpf_hash, brand_id, first_met_at)
SELECT cpf_hash, 'default', min(at) FROM (
  SELECT cpf_hash, created_at AS at FROM customers
  UNION ALL
  SELECT cpf_hash, created_at FROM flows WHERE cpf_hash IS NOT NULL
) seen GROUP BY cpf_hash;
INSERT INTO customer_brands (cpf_hash, brand_id, first_met_at)
SELECT cpf_hash, brand_id, min(created_at) FROM flows
 WHERE cpf_hash IS NOT NULL AND brand_id <> 'default' AND type IN ('deposit', 'withdrawal')
 GROUP BY cpf_hash, brand_id;

-- Down Migration
DROP TABLE customer_brands;
