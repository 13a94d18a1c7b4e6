-- Up Migration
-- The back office: the people who decide cases, their sessions, and what they did.

CREATE TABLE operators (
  id             bigserial PRIMARY KEY,
  -- Lower-cased on the way in: one account per address, however it is typed.
  email          text NOT NULL UNIQUE CHECK (email = lower(email)),
  name           text NOT NULL,
  role           text NOT NULL CHECK (role IN ('viewer', 'reviewer', 'admin')),
  -- An argon2id PHC string; never the password.
  password_hash  text NOT NULL,
  -- IANA zone the operator's pages show times in.
  time_zone      text NOT NULL DEFAULT 'America/Sao_Paulo',
  disabled_at    timestamptz,
  created_at     timestamptz NOT NULL DEFAULT now(),
  updated_at     timestamptz NOT NULL DEFAULT now()
);

-- express-session's store (connect-pg-simple's layout): the session id, its data, its expiry.
CREATE TABLE backoffice_sessions (
  sid     varchar NOT NULL PRIMARY KEY,
  sess    json NOT NULL,
  expire  timestamp(6) NOT NULL
);
CREATE INDEX backoffice_sessions_expire_idx ON backoffice_sessions (expire);

-- Every operator action, in order; rows are only ever added.
CREATE TABLE operator_actions (
  id              bigserial PRIMARY KEY,
  at              timestamptz NOT NULL DEFAULT clock_timestamp(),
  operator_id     bigint REFERENCES operators (id),
  -- Kept as written then: an operator renamed or removed later still reads as who acted.
  operator_email  text NOT NULL,
  operator_role   text,
  -- e.g. sign_in, onboarding.approve, deposit.accept, audit.export
  action          text NOT NULL,
  -- done: it took effect; refused: the role may not; conflict: the case was no longer open
  -- to it; failed: the flow did not take it.
  outcome         text NOT NULL CHECK (outcome IN ('done', 'refused', 'conflict', 'failed')),
  case_type       text,
  case_id         text,
  before          jsonb,
  after           jsonb,
  reason          text
);
CREATE INDEX operator_actions_case_idx ON operator_actions (case_id, at);
CREATE INDEX operator_actions_at_idx ON operator_actions (at);

CREATE FUNCTION operator_actions_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'operator_actions is append-only: % refused', TG_OP
    USING ERRCODE = 'insufficient_privilege';
END;
$$;
CREATE TRIGGER operator_actions_no_update BEFORE UPDATE OR DELETE ON operator_actions
  FOR EACH ROW EXECUTE FUNCTION operator_actions_append_only();
CREATE TRIGGER operator_actions_no_truncate BEFORE TRUNCATE ON operator_actions
  FOR EACH STATEMENT EXECUTE FUNCTION operator_actions_append_only();

-- Down Migration
DROP TABLE operator_actions;
DROP FUNCTION operator_actions_append_only();
DROP TABLE backoffice_sessions;
DROP TABLE operators;
