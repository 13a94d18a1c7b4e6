-- Up Migration
-- Events and webhook endpoints belong to a brand (docs/brands.md): a key reads only its acting
-- brand's events and endpoints, and an endpoint receives only its brand's events. Every row from
-- before brands, and any a previous version writes during a rolling upgrade, is the default
-- brand's, so a single-brand install sets nothing new.
ALTER TABLE events ADD COLUMN brand_id text NOT NULL DEFAULT 'default' REFERENCES brands (id);
ALTER TABLE webhook_endpoints ADD COLUMN brand_id text NOT NULL DEFAULT 'default' REFERENCES brands (id);
-- GET /v1/events: one brand's events by position (and by type).
CREATE INDEX events_brand_position_idx ON events (brand_id, position);
CREATE INDEX events_brand_type_idx ON events (brand_id, type, position);
-- The fan-out: the enabled endpoints of the event's brand.
CREATE INDEX webhook_endpoints_brand_idx ON webhook_endpoints (brand_id) WHERE enabled;

-- The same append, with the event's brand: given by the writer (an endpoint's own, an alert's
-- flow's), or else the stream's, read from its id as a flow's workflow id names it, the brand
-- its flows row holds (`bet-rio:deposit-<txid>`; the default brand's ids have no prefix). A
-- customer's stream names none: the default brand's (people are install-wide; onboardings are
-- the default brand's). The old signature stays, for the writers that name no brand and for a
-- previous version's during a rolling upgrade, and goes the same way.
-- A prefix that is no brand's (no flow's id has one) is the default brand's too, never a failed write.
CREATE FUNCTION pixflow_stream_brand(p_stream text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT coalesce((SELECT b.id FROM brands b
                    WHERE strpos(p_stream, ':') > 0 AND b.id = split_part(p_stream, ':', 1)), 'default')
$$;

CREATE FUNCTION pixflow_append_event(p_type text, p_stream text, p_stream_type text, p_business text,
                                     p_data jsonb, p_owner text, p_brand text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v_seq   integer;
  v_id    text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
  v_brand text := coalesce(p_brand, pixflow_stream_brand(p_stream));
BEGIN
  INSERT INTO event_streams (stream_id, seq) VALUES (p_stream, 1)
    ON CONFLICT (stream_id) DO UPDATE SET seq = event_streams.seq + 1
    RETURNING seq INTO v_seq;
  INSERT INTO events (id, type, stream_id, stream_type, business_id, seq, data, owner, brand_id)
    VALUES (v_id, p_type, p_stream, p_stream_type, p_business, v_seq, p_data, p_owner, v_brand);
  -- A stream's events reach an endpoint in order: one behind a pending one of its stream waits
  -- (due at infinity) until that one is delivered or given up, which makes it due.
  INSERT INTO webhook_deliveries (event_id, endpoint_id, stream_id, seq, next_attempt_at)
    SELECT v_id, ep.id, p_stream, v_seq,
           CASE WHEN EXISTS (SELECT 1 FROM webhook_deliveries w
                              WHERE w.endpoint_id = ep.id AND w.stream_id = p_stream AND w.state = 'pending')
                THEN 'infinity'::timestamptz ELSE now() END
      FROM webhook_endpoints ep
     WHERE ep.enabled
       AND ep.brand_id = v_brand
       AND (p_owner IS NULL OR ep.owner = p_owner)
       AND ('*' = ANY (ep.events) OR p_type = ANY (ep.events));
  RETURN v_id;
END $$;

CREATE OR REPLACE FUNCTION pixflow_append_event(p_type text, p_stream text, p_stream_type text, p_business text,
                                                p_data jsonb, p_owner text DEFAULT NULL)
RETURNS text LANGUAGE sql AS $$
  SELECT pixflow_append_event(p_type, p_stream, p_stream_type, p_business, p_data, p_owner, NULL::text)
$$;

-- Down Migration
CREATE OR REPLACE FUNCTION pixflow_append_event(p_type text, p_stream text, p_stream_type text, p_business text,
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
DROP FUNCTION pixflow_append_event(text, text, text, text, jsonb, text, text);
DROP FUNCTION pixflow_stream_brand(text);
DROP INDEX webhook_endpoints_brand_idx;
DROP INDEX events_brand_type_idx;
DROP INDEX events_brand_position_idx;
ALTER TABLE webhook_endpoints DROP COLUMN brand_id;
ALTER TABLE events DROP COLUMN brand_id;
