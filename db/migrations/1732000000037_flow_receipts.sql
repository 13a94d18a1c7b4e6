-- Up Migration
-- A withdrawal's receipt belongs to its flow: two brands may each have a withdrawal of the same
-- transactionId (`withdrawal-<id>` and `<brand>:withdrawal-<id>`), and each keeps its own
-- receipt. withdrawal_receipts cannot: its key is the transactionId, which the previous
-- version's writer names (`ON CONFLICT (transaction_id)`). So the receipts move to a table keyed
-- by the workflow id alone, which this version writes and reads; every receipt stored before is
-- copied in (migration 036 filed each under its flow, the default brand's).
--
-- For a rolling upgrade, both ways, until no process of a version before this one runs:
-- - a receipt the previous version's worker stores in withdrawal_receipts (its pinned
--   withdrawals, by transactionId) is copied here, under the workflow id migration 036's trigger
--   gave it (the default brand's);
-- - a default brand's receipt this version stores is copied to withdrawal_receipts, where the
--   previous version's API and back office read it. Another brand's is not: no previous version
--   moves another brand's money, and its transactionId may be the default brand's.
-- A copy made by the other trigger is not copied back (pg_trigger_depth).
--
-- withdrawal_receipts, its triggers and migration 036's are dropped in a later release, once no
-- process of a version before this one is left (docs/brands.md).
CREATE TABLE flow_receipts (
  workflow_id     text PRIMARY KEY,
  transaction_id  text NOT NULL,
  image           bytea NOT NULL,
  content_type    text NOT NULL DEFAULT 'image/png',
  paid_at         timestamptz,
  stored_at       timestamptz NOT NULL DEFAULT now()
);

INSERT INTO flow_receipts (workflow_id, transaction_id, image, content_type, paid_at, stored_at)
  SELECT workflow_id, transaction_id, image, content_type, paid_at, stored_at FROM withdrawal_receipts;

CREATE FUNCTION withdrawal_receipt_to_flow() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() > 1 THEN
    RETURN NULL;
  END IF;
  INSERT INTO flow_receipts (workflow_id, transaction_id, image, content_type, paid_at, stored_at)
    VALUES (NEW.workflow_id, NEW.transaction_id, NEW.image, NEW.content_type, NEW.paid_at, NEW.stored_at)
    ON CONFLICT (workflow_id) DO UPDATE
      SET image = EXCLUDED.image, content_type = EXCLUDED.content_type, paid_at = EXCLUDED.paid_at,
          stored_at = EXCLUDED.stored_at;
  RETURN NULL;
END $$;
CREATE TRIGGER withdrawal_receipts_to_flow AFTER INSERT OR UPDATE ON withdrawal_receipts
  FOR EACH ROW EXECUTE FUNCTION withdrawal_receipt_to_flow();

CREATE FUNCTION flow_receipt_to_withdrawal() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF pg_trigger_depth() > 1 OR NEW.workflow_id <> 'withdrawal-' || NEW.transaction_id THEN
    RETURN NULL;
  END IF;
  INSERT INTO withdrawal_receipts (transaction_id, workflow_id, image, content_type, paid_at, stored_at)
    VALUES (NEW.transaction_id, NEW.workflow_id, NEW.image, NEW.content_type, NEW.paid_at, NEW.stored_at)
    ON CONFLICT (transaction_id) DO UPDATE
      SET image = EXCLUDED.image, content_type = EXCLUDED.content_type, paid_at = EXCLUDED.paid_at,
          stored_at = EXCLUDED.stored_at;
  RETURN NULL;
END $$;
CREATE TRIGGER flow_receipts_to_withdrawal AFTER INSERT OR UPDATE ON flow_receipts
  FOR EACH ROW EXECUTE FUNCTION flow_receipt_to_withdrawal();

-- Down Migration
-- Another brand's receipts, which withdrawal_receipts cannot hold, are lost going down.
DROP TRIGGER flow_receipts_to_withdrawal ON flow_receipts;
DROP FUNCTION flow_receipt_to_withdrawal();
DROP TRIGGER withdrawal_receipts_to_flow ON withdrawal_receipts;
DROP FUNCTION withdrawal_receipt_to_flow();
DROP TABLE flow_receipts;
