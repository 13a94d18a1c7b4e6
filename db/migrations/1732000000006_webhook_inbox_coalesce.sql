-- Up Migration
-- The provider's notifications carry no delivery id: the same body can be a retry of one event
-- or a new event that looks alike (a withdrawal's every status change). A key is no longer kept
-- once for ever: copies are coalesced only while an identical row still waits for its signal,
-- and one that arrives soon after an identical signal waits out a short window (see db/inbox.ts).
ALTER TABLE webhook_inbox DROP CONSTRAINT webhook_inbox_dedupe_key_key;
-- When a delivery took the row (fast path or relay); NULL while it waits.
ALTER TABLE webhook_inbox ADD COLUMN claimed_at timestamptz;
-- Identical copies that joined this row instead of a row of their own.
ALTER TABLE webhook_inbox ADD COLUMN copies integer NOT NULL DEFAULT 0;
UPDATE webhook_inbox SET claimed_at = COALESCE(delivered_at, received_at) WHERE attempts > 0 OR delivered_at IS NOT NULL;
CREATE INDEX webhook_inbox_key_idx ON webhook_inbox (dedupe_key, id DESC);
-- At most one waiting row per key: the one later copies join.
CREATE UNIQUE INDEX webhook_inbox_waiting_key ON webhook_inbox (dedupe_key)
  WHERE delivered_at IS NULL AND gave_up_at IS NULL AND claimed_at IS NULL;

-- Down Migration
DROP INDEX webhook_inbox_waiting_key;
DROP INDEX webhook_inbox_key_idx;
ALTER TABLE webhook_inbox DROP COLUMN copies, DROP COLUMN claimed_at;
ALTER TABLE webhook_inbox ADD CONSTRAINT webhook_inbox_dedupe_key_key UNIQUE (dedupe_key);
