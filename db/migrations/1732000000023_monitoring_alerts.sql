-- Up Migration
-- Monitoring alerts (docs/monitoring.md): suspicious movement a rule found in a person's flows.
-- They flag and never block money. One alert per rule, person and the flow that tripped it: a
-- monitor that reads the same events again (after a crash, or two processes) raises nothing twice.
CREATE TABLE alerts (
  id          text PRIMARY KEY,
  rule        text NOT NULL,
  -- Never the whole CPF: its keyed hash and masked form.
  cpf_hash    text NOT NULL,
  cpf_masked  text,
  -- The flow whose event tripped the rule, and every flow the rule counted (it included).
  flow_id     text NOT NULL,
  flow_ids    text[] NOT NULL,
  -- The values that tripped it (amounts in centavos, counts, windows, times).
  facts       jsonb NOT NULL,
  raised_at   timestamptz NOT NULL DEFAULT now(),
  -- open until an operator marks it reviewed (nothing to report) or reported (to the authority).
  status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'reviewed', 'reported')),
  decided_by  text,
  decided_at  timestamptz,
  note        text,
  UNIQUE (rule, cpf_hash, flow_id)
);
CREATE INDEX alerts_status_idx ON alerts (status, raised_at);
CREATE INDEX alerts_raised_idx ON alerts (raised_at);
CREATE INDEX alerts_person_idx ON alerts (cpf_hash, rule, raised_at);

-- How far the monitor has read the events (by position): one row, moved in the transaction that
-- writes the alerts of the events it read, so a crash re-reads from the last commit.
CREATE TABLE alert_monitor_cursor (
  name       text PRIMARY KEY,
  position   bigint NOT NULL DEFAULT 0,
  updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO alert_monitor_cursor (name) VALUES ('alerts');

-- Down Migration
DROP TABLE alert_monitor_cursor;
DROP TABLE alerts;
