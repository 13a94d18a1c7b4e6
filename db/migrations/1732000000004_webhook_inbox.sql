-- Up Migration
-- Every authenticated notification lands here before the provider gets its 2xx; the relay
-- signals pending rows to their workflows. dedupe_key makes provider retries harmless.
CREATE TABLE webhook_inbox (
  id            bigserial PRIMARY KEY,
  dedupe_key    text NOT NULL UNIQUE,
  point         text NOT NULL,
  workflow_id   text NOT NULL,
  raw_body      text NOT NULL,
  headers       jsonb NOT NULL DEFAULT '{}'::jsonb,
  received_at   timestamptz NOT NULL DEFAULT now(),
  delivered_at  timestamptz,
  attempts      integer NOT NULL DEFAULT 0,
  last_error    text,
  next_attempt_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_inbox_pending_idx ON webhook_inbox (next_attempt_at) WHERE delivered_at IS NULL;

-- Down Migration
DROP TABLE webhook_inbox;
