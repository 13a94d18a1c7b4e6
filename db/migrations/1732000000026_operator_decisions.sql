-- Up Migration
-- A decision that moves money or decides a person is recorded here by the side that checked the
-- operator (the back office: their session and role; the API: its key and scope) before it is
-- sent to the flow, and the flow takes it only once its worker has read it back: a decision sent
-- to Temporal directly names no row, and changes nothing. Rows are only ever added.

CREATE TABLE operator_decisions (
  id              uuid PRIMARY KEY,
  at              timestamptz NOT NULL DEFAULT clock_timestamp(),
  -- The flow it is for, and what it decides there.
  workflow_id     text NOT NULL,
  kind            text NOT NULL CHECK (kind IN ('withdrawal.decision', 'deposit.resolution', 'onboarding.review')),
  decision        text NOT NULL,
  reason          text,
  -- Who decided, as checked: a back-office operator (id, role), or an API key's caller.
  operator_id     bigint REFERENCES operators (id),
  operator_email  text NOT NULL,
  operator_role   text NOT NULL,
  -- How they were authenticated: a hash of the back-office session, or the API key's id; never
  -- the secret itself.
  authenticated_by text NOT NULL
);
CREATE INDEX operator_decisions_workflow_idx ON operator_decisions (workflow_id, at);

CREATE TRIGGER operator_decisions_no_update BEFORE UPDATE OR DELETE ON operator_decisions
  FOR EACH ROW EXECUTE FUNCTION operator_actions_append_only();
CREATE TRIGGER operator_decisions_no_truncate BEFORE TRUNCATE ON operator_decisions
  FOR EACH STATEMENT EXECUTE FUNCTION operator_actions_append_only();

-- A decision counts once: the flow run (and its local activity) that took it. A second use, by
-- this flow or another, is refused.
CREATE TABLE operator_decision_uses (
  decision_id  uuid PRIMARY KEY REFERENCES operator_decisions (id),
  workflow_id  text NOT NULL,
  run_id       text NOT NULL,
  activity_id  text NOT NULL,
  at           timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Every decision a flow refused for want of a proof, once per check (a retried check counts once).
CREATE TABLE refused_decisions (
  id           bigserial PRIMARY KEY,
  at           timestamptz NOT NULL DEFAULT clock_timestamp(),
  workflow_id  text NOT NULL,
  run_id       text NOT NULL,
  activity_id  text NOT NULL,
  kind         text NOT NULL,
  cause        text NOT NULL,
  UNIQUE (run_id, activity_id)
);
CREATE INDEX refused_decisions_workflow_idx ON refused_decisions (workflow_id);

-- Down Migration
DROP TABLE refused_decisions;
DROP TABLE operator_decision_uses;
DROP TABLE operator_decisions;
