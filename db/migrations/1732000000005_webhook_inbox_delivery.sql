-- Up Migration
-- The signal a row delivers is decided once, on arrival, so the relay needs no parsing of its
-- own; gave_up_at ends retries for a workflow that never appeared (the row stays for audit).
ALTER TABLE webhook_inbox
  ADD COLUMN signal_name    text NOT NULL,
  ADD COLUMN signal_payload jsonb NOT NULL,
  ADD COLUMN gave_up_at     timestamptz;
DROP INDEX webhook_inbox_pending_idx;
CREATE INDEX webhook_inbox_pending_idx ON webhook_inbox (next_attempt_at)
  WHERE delivered_at IS NULL AND gave_up_at IS NULL;

-- Down Migration
DROP INDEX webhook_inbox_pending_idx;
CREATE INDEX webhook_inbox_pending_idx ON webhook_inbox (next_attempt_at) WHERE delivered_at IS NULL;
ALTER TABLE webhook_inbox DROP COLUMN signal_name, DROP COLUMN signal_payload, DROP COLUMN gave_up_at;
