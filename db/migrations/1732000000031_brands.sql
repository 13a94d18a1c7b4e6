-- Up Migration
-- The brands an operator trades under (docs/brands.md), and the licensed operator each belongs
-- to: its legal name, CNPJ (14 digits) and the SPA/MF authorization it trades under, null until
-- set. One default brand exists, so a single-brand install needs nothing new. Nothing refers to
-- this table yet.
CREATE TABLE brands (
  id             text PRIMARY KEY CHECK (id ~ '^[a-z][a-z0-9-]{1,39}$'),
  name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  legal_name     text CHECK (length(legal_name) BETWEEN 1 AND 200),
  cnpj           text CHECK (cnpj ~ '^[0-9A-Z]{12}[0-9]{2}$'),
  "authorization" text CHECK (length("authorization") BETWEEN 1 AND 200),
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
INSERT INTO brands (id, name) VALUES ('default', 'pixflow');

-- Down Migration
DROP TABLE brands;
