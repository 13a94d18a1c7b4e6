-- Up Migration
-- A withdrawal's receipt belongs to its flow, not its transactionId: two brands may each have a
-- withdrawal of the same transactionId (`withdrawal-<id>` and `<brand>:withdrawal-<id>`), and
-- each keeps its own receipt. Every receipt stored before is the default brand's.
ALTER TABLE withdrawal_receipts ADD COLUMN workflow_id text;
UPDATE withdrawal_receipts SET workflow_id = 'withdrawal-' || transaction_id;
ALTER TABLE withdrawal_receipts ALTER COLUMN workflow_id SET NOT NULL;
ALTER TABLE withdrawal_receipts DROP CONSTRAINT withdrawal_receipts_pkey;
ALTER TABLE withdrawal_receipts ADD PRIMARY KEY (workflow_id);
-- The back office and tests still find a receipt by its transactionId.
CREATE INDEX withdrawal_receipts_transaction_idx ON withdrawal_receipts (transaction_id);

-- Down Migration
-- Only the default brand's receipts fit a table keyed by transactionId.
DROP INDEX withdrawal_receipts_transaction_idx;
ALTER TABLE withdrawal_receipts DROP CONSTRAINT withdrawal_receipts_pkey;
DELETE FROM withdrawal_receipts WHERE workflow_id <> 'withdrawal-' || transaction_id;
ALTER TABLE withdrawal_receipts ADD PRIMARY KEY (transaction_id);
ALTER TABLE withdrawal_receipts DROP COLUMN workflow_id;
