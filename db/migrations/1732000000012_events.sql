-- Up Migration
-- Outbound events: an outbox written in the same statement or transaction as the state change it
-- tells of, webhook endpoints that subscribe to it, one delivery row per (event, endpoint), and
-- every attempt kept.

-- The per-stream sequence: a flow (its workflow id), a customer (customer-<keyed CPF hash>) or a
-- webhook endpoint counts its events 1, 2, 3... The row lock of the increment orders a stream's
-- writers.
CREATE TABLE event_streams (
  stream_id text PRIMARY KEY,
  seq       integer NOT NULL
);

CREATE TABLE events (
  id          text PRIMARY KEY,
  -- Insertion order, and the order the pull API reads in (position): positions are handed out
  -- by one sequencer after commit, so a reader never passes an event that commits later with a
  -- smaller number.
  inserted    bigserial NOT NULL UNIQUE,
  position    bigint UNIQUE,
  type        text NOT NULL,
  stream_id   text NOT NULL,
  stream_type text NOT NULL,
  business_id text,
  seq         integer NOT NULL,
  -- The stream's public state after the change: masked CPF and keyed hash only.
  data        jsonb NOT NULL,
  -- Set on events about one API key's own things (its endpoints): only that key sees them.
  owner       text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  UNIQUE (stream_id, seq)
);
CREATE INDEX events_unsequenced_idx ON events (inserted) WHERE position IS NULL;
CREATE INDEX events_stream_idx ON events (stream_id, position);
CREATE INDEX events_type_idx ON events (type, position);
CREATE INDEX events_created_idx ON events (created_at);

CREATE TABLE webhook_endpoints (
  id                    text PRIMARY KEY,
  -- A digest of the API key that created it: another key neither sees nor changes it.
  owner                 text NOT NULL,
  url                   text NOT NULL,
  description           text NOT NULL DEFAULT '',
  events                text[] NOT NULL,
  enabled               boolean NOT NULL DEFAULT true,
  -- Signing secrets, sealed with the payload codec's key (AES-256-GCM); the previous one signs
  -- beside the current one until previous_secret_until.
  secret                text NOT NULL,
  previous_secret       text,
  previous_secret_until timestamptz,
  -- The first failed attempt since the last success: five days of it disables the endpoint.
  failing_since         timestamptz,
  disabled_reason       text,
  disabled_at           timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX webhook_endpoints_owner_idx ON webhook_endpoints (owner, created_at);

CREATE TABLE webhook_deliveries (
  id              bigserial PRIMARY KEY,
  event_id        text NOT NULL REFERENCES events (id) ON DELETE CASCADE,
  endpoint_id     text NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  -- The event's stream and sequence: a stream's events go to an endpoint one after the other.
  stream_id       text NOT NULL,
  seq             integer NOT NULL,
  state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        integer NOT NULL DEFAULT 0,
  -- Due time; while an attempt runs, its lease (a process that dies mid-attempt lets it lapse);
  -- infinity while an earlier event of its stream is still pending for the endpoint.
  next_attempt_at timestamptz NOT NULL DEFAULT now(),
  created_at      timestamptz NOT NULL DEFAULT now(),
  delivered_at    timestamptz,
  UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_stream_idx ON webhook_deliveries (endpoint_id, stream_id, seq)
  WHERE state = 'pending';

CREATE TABLE webhook_attempts (
  id          bigserial PRIMARY KEY,
  delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  endpoint_id text NOT NULL,
  event_id    text NOT NULL,
  attempt     integer NOT NULL,
  at          timestamptz NOT NULL,
  duration_ms integer NOT NULL,
  status_code integer,
  error       text,
  response    text,
  outcome     text NOT NULL CHECK (outcome IN ('delivered', 'failed', 'gone'))
);
CREATE INDEX webhook_attempts_endpoint_idx ON webhook_attempts (endpoint_id, id DESC);

-- Appends one event to its stream and fans it out to the endpoints subscribed to its type, in the
-- caller's statement or transaction: the event exists exactly when the change it tells of does.
CREATE FUNCTION pixflow_append_event(p_type text, p_stream text, p_stream_type text, p_business text,
                                     p_data jsonb, p_owner text DEFAULT NULL)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v_seq integer;
  v_id  text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
BEGIN
  INSERT INTO event_streams (stream_id, seq) VALUES (p_stream, 1)
    ON CONFLICT (stream_id) DO UPDATE SET seq = event_streams.seq + 1
    RETURNING seq INTO v_seq;
  INSERT INTO events (id, type, stream_id, stream_type, business_id, seq, data, owner)
    VALUES (v_id, p_type, p_stream, p_stream_type, p_business, v_seq, p_data, p_owner);
  -- A stream's events reach an endpoint in order: one behind a pending one of its stream waits
  -- (due at infinity) until that one is delivered or given up, which makes it due.
  INSERT INTO webhook_deliveries (event_id, endpoint_id, stream_id, seq, next_attempt_at)
    SELECT v_id, ep.id, p_stream, v_seq,
           CASE WHEN EXISTS (SELECT 1 FROM webhook_deliveries w
                              WHERE w.endpoint_id = ep.id AND w.stream_id = p_stream AND w.state = 'pending')
                THEN 'infinity'::timestamptz ELSE now() END
      FROM webhook_endpoints ep
     WHERE ep.enabled
       AND (p_owner IS NULL OR ep.owner = p_owner)
       AND ('*' = ANY (ep.events) OR p_type = ANY (ep.events));
  RETURN v_id;
END $$;

-- Down Migration
DROP FUNCTION pixflow_append_event(text, text, text, text, jsonb, text);
DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
DROP TABLE events;
DROP TABLE event_streams;
