-- Up Migration
-- A committed event wakes the API's events relays (LISTEN pixflow_events), which otherwise wait
-- a second between looks instead of polling five times a second. Per statement: one notification
-- however many events it inserts, and Postgres folds the same notification within a transaction.
CREATE FUNCTION pixflow_notify_events() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('pixflow_events', '');
  RETURN NULL;
END $$;
CREATE TRIGGER events_notify AFTER INSERT ON events FOR EACH STATEMENT EXECUTE FUNCTION pixflow_notify_events();

-- Down Migration
DROP TRIGGER events_notify ON events;
DROP FUNCTION pixflow_notify_events();
