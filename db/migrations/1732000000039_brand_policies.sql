-- Up Migration
-- A brand's rules (docs/policy.md, Rules of a brand): versioned overrides over the operator's
-- policy (rules_policy), of the fields a brand may set. The policy in force for a brand is the
-- operator's version in force with the brand's newest overrides on it. A brand with no row here
-- has the operator's policy exactly. Versions are only added, as the operator's are.
CREATE TABLE brand_policy_versions (
  brand_id     text NOT NULL REFERENCES brands (id),
  version      integer NOT NULL CHECK (version >= 1),
  -- Each overridden field by its dotted path (`deposits.routing.connectors`), its value as the
  -- policy types it; a field absent is the operator's.
  overrides    jsonb NOT NULL CHECK (jsonb_typeof(overrides) = 'object'),
  reason       text NOT NULL,
  changed_by   text NOT NULL,
  approved_by  text,
  created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (brand_id, version),
  CHECK (approved_by IS NULL OR lower(approved_by) <> lower(changed_by))
);
CREATE TRIGGER brand_policy_versions_no_update BEFORE UPDATE OR DELETE ON brand_policy_versions
  FOR EACH ROW EXECUTE FUNCTION operator_actions_append_only();
CREATE TRIGGER brand_policy_versions_no_truncate BEFORE TRUNCATE ON brand_policy_versions
  FOR EACH STATEMENT EXECUTE FUNCTION operator_actions_append_only();

-- A brand's change that loosens a money limit waits for a second, different admin, as the
-- operator's do; approved, it becomes the brand's next version if neither the brand's version nor
-- the operator's it was proposed over changed since (its diff would not be what was approved).
CREATE TABLE brand_policy_changes (
  id                     bigserial PRIMARY KEY,
  brand_id               text NOT NULL REFERENCES brands (id),
  -- The brand's version it was proposed over (0: the brand had none).
  base_version           integer NOT NULL CHECK (base_version >= 0),
  base_operator_version  integer NOT NULL REFERENCES rules_policy (version),
  overrides              jsonb NOT NULL CHECK (jsonb_typeof(overrides) = 'object'),
  reason                 text NOT NULL,
  proposed_by            text NOT NULL,
  proposed_at            timestamptz NOT NULL DEFAULT clock_timestamp(),
  status                 text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'applied', 'rejected')),
  decided_by             text,
  decided_at             timestamptz,
  version                integer,
  FOREIGN KEY (brand_id, version) REFERENCES brand_policy_versions (brand_id, version),
  CHECK ((status = 'pending') = (decided_by IS NULL)),
  CHECK (status <> 'applied' OR (version IS NOT NULL AND lower(decided_by) <> lower(proposed_by)))
);
CREATE INDEX brand_policy_changes_pending_idx ON brand_policy_changes (brand_id, proposed_at)
  WHERE status = 'pending';

-- A brand's new version wakes every process's policy store on the operator's channel, which
-- reads both again.
CREATE FUNCTION pixflow_notify_brand_policy() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pixflow_policy', NEW.brand_id || ':' || NEW.version::text);
  RETURN NULL;
END $$;
CREATE TRIGGER brand_policy_versions_notify AFTER INSERT ON brand_policy_versions
  FOR EACH ROW EXECUTE FUNCTION pixflow_notify_brand_policy();

-- Down Migration
DROP TRIGGER brand_policy_versions_notify ON brand_policy_versions;
DROP FUNCTION pixflow_notify_brand_policy();
DROP TABLE brand_policy_changes;
DROP TABLE brand_policy_versions;
