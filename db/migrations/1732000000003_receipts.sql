-- Up Migration
CREATE TABLE withdrawal_receipts (
  transaction_id  text PRIMARY KEY,
  image           bytea NOT NULL,
  content_type    text NOT NULL DEFAULT 'image/png',
  paid_at         timestamptz,
  stored_at       timestamptz NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE withdrawal_receipts;
