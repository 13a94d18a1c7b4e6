-- Up Migration
-- A completed deposit's money that went back to its payer without pixflow asking: MED returns
-- the payer's side started, or any return of the received Pix whose id pixflow did not ask for.
-- One row per return of a received Pix, whatever the number of webhooks that told of it.
CREATE TABLE deposit_reversals (
  e2e_id           text NOT NULL,
  return_id        text NOT NULL,
  txid             text NOT NULL,
  workflow_id      text NOT NULL,
  connector        text NOT NULL,
  nature           text NOT NULL,
  amount_centavos  bigint NOT NULL CHECK (amount_centavos > 0),
  -- Less than the deposit's amount.
  partial          boolean NOT NULL,
  state            text NOT NULL CHECK (state IN ('processing', 'returned', 'failed')),
  -- The deposit's person (keyed hash, masked) and the payer, masked: never a whole CPF.
  cpf_hash         text,
  cpf_masked       text,
  payer_cpf_masked text,
  first_seen_at    timestamptz NOT NULL DEFAULT now(),
  settled_at       timestamptz,
  updated_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (e2e_id, return_id)
);
CREATE INDEX deposit_reversals_txid_idx ON deposit_reversals (txid);
CREATE INDEX deposit_reversals_seen_idx ON deposit_reversals (first_seen_at DESC);

-- Down Migration
DROP TABLE deposit_reversals;
