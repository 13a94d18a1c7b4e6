-- Up Migration
-- A withdrawal's receipt belongs to its flow, not only its transactionId: two brands may each have
-- a withdrawal of the same transactionId (`withdrawal-<id>` and `<brand>:withdrawal-<id>`). Every
-- receipt stored before is the default brand's.
--
-- Expand only, for a rolling upgrade: the previous version's workers keep running their pinned
-- withdrawals, and their writer inserts by transactionId alone (`ON CONFLICT (transaction_id)`).
-- So the transactionId stays the primary key, and a trigger files such a receipt under the
-- default brand's workflow id. Dropping that key, so two brands' receipts of one transactionId
-- can both be kept, is the contract step, taken once no previous version is left and other
-- brands may move money (docs/brands.md).
ALTER TABLE withdrawal_receipts ADD COLUMN workflow_id text;
UPDATE withdrawal_receipts SET workflow_id = 'withdrawal-' || transaction_id;

CREATE FUNCTION withdrawal_receipt_default_flow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.workflow_id := COALESCE(NEW.workflow_id, 'withdrawal-' || NEW.transaction_id);
  RETURN NEW;
END $$;
CREATE TRIGGER withdrawal_receipts_default_flow BEFORE INSERT ON withdrawal_receipts
  FOR EACH ROW EXECUTE FUNCTION withdrawal_receipt_default_flow();

ALTER TABLE withdrawal_receipts ALTER COLUMN workflow_id SET NOT NULL;
CREATE UNIQUE INDEX withdrawal_receipts_workflow_idx ON withdrawal_receipts (workflow_id);

-- Down Migration
DROP INDEX withdrawal_receipts_workflow_idx;
DROP TRIGGER withdrawal_receipts_default_flow ON withdrawal_receipts;
DROP FUNCTION withdrawal_receipt_default_flow();
ALTER TABLE withdrawal_receipts DROP COLUMN workflow_id;
