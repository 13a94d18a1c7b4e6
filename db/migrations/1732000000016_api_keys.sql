-- Up Migration
-- API keys as records: each a principal with a name, scopes, an expiry and a revocation. Only the
-- SHA-256 of a secret is kept (the secrets are 32 random bytes); the prefix is its first few
-- characters, for people to tell keys apart. What a key owns (its webhook endpoints) is owned by
-- its id, which a rotation keeps.

CREATE TABLE api_keys (
  id                    text PRIMARY KEY CHECK (id ~ '^ak_[0-9a-f]{16}$'),
  name                  text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  scopes                text[] NOT NULL CHECK (
    cardinality(scopes) > 0 AND scopes <@ ARRAY[
      'onboardings:read', 'onboardings:write', 'deposits:read', 'deposits:write',
      'withdrawals:read', 'withdrawals:write', 'customers:read', 'customers:write',
      'events:read', 'events:write', 'webhooks:read', 'webhooks:write']::text[]),
  prefix                text NOT NULL,
  secret_hash           bytea NOT NULL UNIQUE,
  -- After a rotation with an overlap, the previous secret still works until then.
  previous_secret_hash  bytea UNIQUE,
  previous_secret_until timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  -- Who made it: an operator's address, or the operator CLI.
  created_by            text NOT NULL,
  rotated_at            timestamptz,
  -- Written at most about once a minute per key.
  last_used_at          timestamptz,
  expires_at            timestamptz,
  revoked_at            timestamptz
);
CREATE INDEX api_keys_created_idx ON api_keys (created_at);

-- Down Migration
DROP TABLE api_keys;
