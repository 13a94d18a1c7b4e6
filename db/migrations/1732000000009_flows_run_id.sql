-- Up Migration
-- The run that wrote a flow's row. A workflow id can start again (an expired onboarding, every
-- biometric identification), and the new run counts its sequence from 1 again: a run closes
-- before the next of its id starts, so a write from another run than the row's is the newer one.
ALTER TABLE flows ADD COLUMN run_id text;

-- Down Migration
ALTER TABLE flows DROP COLUMN run_id;
