-- Up Migration
-- An operator's sessions end when their password, role or enabled state changes, however it is
-- changed (the CLI, a future page, SQL by hand). Each session carries the generation it was
-- signed in under; every request compares it with the operator's, so a session another API
-- process still holds, or one a request in flight writes back, is refused all the same. Their
-- rows are deleted too, so nothing of them is left to find.

ALTER TABLE operators ADD COLUMN session_generation integer NOT NULL DEFAULT 0;

CREATE FUNCTION operators_end_sessions() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.password_hash IS DISTINCT FROM OLD.password_hash
     OR NEW.role IS DISTINCT FROM OLD.role
     OR NEW.disabled_at IS DISTINCT FROM OLD.disabled_at THEN
    NEW.session_generation := OLD.session_generation + 1;
    DELETE FROM backoffice_sessions WHERE sess->>'operatorId' = OLD.id::text;
  END IF;
  RETURN NEW;
END;
$$;
CREATE TRIGGER operators_end_sessions BEFORE UPDATE ON operators
  FOR EACH ROW EXECUTE FUNCTION operators_end_sessions();

-- Sessions from before generations existed carry none: they are refused, and go now.
DELETE FROM backoffice_sessions;

-- Down Migration
DROP TRIGGER operators_end_sessions ON operators;
DROP FUNCTION operators_end_sessions();
ALTER TABLE operators DROP COLUMN session_generation;
