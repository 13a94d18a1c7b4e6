-- Up Migration
-- Each brand's account at a connector (docs/brands.md, Connector accounts): at most one per
-- brand and connector. `settings` holds what may be shown (URLs, client id, merchant, partner id,
-- Pix key, PEM file paths); `secrets_sealed` the secrets as one JSON object sealed with the
-- payload codec's keys, as webhook endpoints' secrets are (common/secret-box.ts). Nothing reads
-- it yet to pick a flow's connector.
--
-- A notification is to be routed to its brand by the first provider's partner id, or by the
-- secret path segment of the URL it came to, so neither may be any other brand's. The partner id
-- is a setting, unique as it is; a sealed secret cannot be compared, so `secret_hashes` keeps a
-- keyed hash (HMAC-SHA256 under PII_HASH_KEY) of each secret set, and the webhook secret's is
-- unique per connector, as API keys keep only their secret's hash. The hashes also tell which
-- secrets are set, and whether a change changed one, without opening them.
CREATE TABLE brand_connector_accounts (
  brand_id       text NOT NULL REFERENCES brands (id),
  connector      text NOT NULL CHECK (connector IN ('identity-payments', 'api-pix')),
  settings       jsonb NOT NULL CHECK (jsonb_typeof(settings) = 'object'),
  secrets_sealed text NOT NULL CHECK (secrets_sealed ~ '^[^.]+\..+$'),
  secret_hashes  jsonb NOT NULL CHECK (jsonb_typeof(secret_hashes) = 'object'),
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (brand_id, connector),
  CHECK (connector <> 'identity-payments' OR (settings ? 'partnerId' AND secret_hashes ? 'webhookSecret'))
);

CREATE UNIQUE INDEX brand_connector_accounts_partner_id
  ON brand_connector_accounts ((settings ->> 'partnerId'))
  WHERE connector = 'identity-payments';

CREATE UNIQUE INDEX brand_connector_accounts_webhook_secret
  ON brand_connector_accounts (connector, (secret_hashes ->> 'webhookSecret'))
  WHERE secret_hashes ? 'webhookSecret';

-- A Pix key receives into one account: two brands naming it would take each other's payments.
CREATE UNIQUE INDEX brand_connector_accounts_pix_key
  ON brand_connector_accounts ((settings ->> 'pixKey'))
  WHERE connector = 'api-pix';

-- Down Migration
DROP TABLE brand_connector_accounts;
