-- Up Migration
-- A circuit breaker per connector deposits are routed to (docs/rules.md, Routing deposits), one
-- row each, shared by every worker: the charge creations it failed in the current window, and
-- until when it is skipped. Past `open_until` it is half-open: one deposit at a time tries it
-- (`probe_until`), a success closes it, a failure opens it again.
CREATE TABLE connector_breakers (
  connector          text PRIMARY KEY,
  failures           integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
  window_started_at  timestamptz,
  open_until         timestamptz,
  probe_until        timestamptz,
  opened_at          timestamptz,
  updated_at         timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- Down Migration
DROP TABLE connector_breakers;
