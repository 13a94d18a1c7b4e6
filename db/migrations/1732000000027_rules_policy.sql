-- Up Migration
-- The rules every process decides with (docs/policy.md): one policy, versioned. A version is
-- only ever added; the newest is in force. Version 1 is seeded from the environment by the first
-- process to start (its primary key makes two starting at once write one).
CREATE TABLE rules_policy (
  version      integer PRIMARY KEY CHECK (version >= 1),
  policy       jsonb NOT NULL,
  reason       text NOT NULL,
  -- Who made the change (an operator's address, or `environment` for the seeded version), and
  -- the second admin who approved it when it loosened a money limit.
  changed_by   text NOT NULL,
  approved_by  text,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK (approved_by IS NULL OR lower(approved_by) <> lower(changed_by))
);
CREATE TRIGGER rules_policy_no_update BEFORE UPDATE OR DELETE ON rules_policy
  FOR EACH ROW EXECUTE FUNCTION operator_actions_append_only();
CREATE TRIGGER rules_policy_no_truncate BEFORE TRUNCATE ON rules_policy
  FOR EACH STATEMENT EXECUTE FUNCTION operator_actions_append_only();

-- A change that loosens a money limit waits here for a second, different admin; approved, it
-- becomes a version, if the policy is still the one it was proposed against.
CREATE TABLE rules_policy_changes (
  id            bigserial PRIMARY KEY,
  base_version  integer NOT NULL REFERENCES rules_policy (version),
  policy        jsonb NOT NULL,
  reason        text NOT NULL,
  proposed_by   text NOT NULL,
  proposed_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  status        text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied', 'rejected')),
  decided_by    text,
  decided_at    timestamptz,
  -- The version it became, once applied.
  version       integer REFERENCES rules_policy (version),
  CHECK ((status = 'pending') = (decided_by IS NULL)),
  CHECK (status <> 'applied' OR (version IS NOT NULL AND lower(decided_by) <> lower(proposed_by)))
);
CREATE INDEX rules_policy_changes_pending_idx ON rules_policy_changes (proposed_at) WHERE status = 'pending';

-- A new version wakes every process's policy store (LISTEN pixflow_policy), which reads it.
CREATE FUNCTION pixflow_notify_policy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pixflow_policy', NEW.version::text);
  RETURN NULL;
END $$;
CREATE TRIGGER rules_policy_notify AFTER INSERT ON rules_policy FOR EACH ROW EXECUTE FUNCTION pixflow_notify_policy();

-- An alert names the version of the policy whose thresholds raised it (null: raised before).
ALTER TABLE alerts ADD COLUMN policy_version integer;

-- Down Migration
ALTER TABLE alerts DROP COLUMN policy_version;
DROP TRIGGER rules_policy_notify ON rules_policy;
DROP FUNCTION pixflow_notify_policy();
DROP TABLE rules_policy_changes;
DROP TABLE rules_policy;
