-- Up Migration
-- A person's events reach every brand that knows the person (docs/brands.md, "Events and webhook
-- endpoints of a brand"): `customer.*` and the events of a person's onboarding and biometric
-- identification, which the brands share (docs/rules.md, "A person across brands"), are appended
-- once for each brand in customer_brands (migration 040), each its own event with its own id and
-- position, and once for the default brand when no brand knows the person, so a single-brand
-- install gets one event per change, as before. A flow's events stay its flow's brand's.

-- The copies of one change share their stream's number (`sequence`): it counts the person's
-- stream, the same at every brand, and tells the back office's timelines one change from its
-- copies. A stream's number is unique per brand.
ALTER TABLE events ADD CONSTRAINT events_stream_brand_seq_key UNIQUE (stream_id, brand_id, seq);
ALTER TABLE events DROP CONSTRAINT events_stream_id_seq_key;

-- The brands an event with no brand given is appended for: a person's stream (its business id
-- is the keyed CPF hash) goes to the brands that know the person, else to the default brand;
-- any other stream to its own brand, as its id names it (migration 035).
CREATE FUNCTION pixflow_event_brands(p_stream text, p_stream_type text, p_business text)
RETURNS text[] LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN p_stream_type IN ('customer', 'onboarding', 'biometrics') THEN
      coalesce((SELECT array_agg(cb.brand_id ORDER BY cb.brand_id)
                  FROM customer_brands cb WHERE cb.cpf_hash = p_business),
               ARRAY['default'])
    ELSE ARRAY[pixflow_stream_brand(p_stream)]
  END
$$;

-- The same signatures as before, so a previous version's writers keep working during a rolling
-- upgrade (the six-argument one calls this one): a brand given (an endpoint's own, an alert's
-- flow's) is the event's only brand. Answers the first copy's id.
CREATE OR REPLACE FUNCTION pixflow_append_event(p_type text, p_stream text, p_stream_type text, p_business text,
                                                p_data jsonb, p_owner text, p_brand text)
RETURNS text LANGUAGE plpgsql AS $$
DECLARE
  v_seq    integer;
  v_id     text;
  v_brands text[] := CASE WHEN p_brand IS NOT NULL THEN ARRAY[p_brand]
                          ELSE pixflow_event_brands(p_stream, p_stream_type, p_business) END;
BEGIN
  INSERT INTO event_streams (stream_id, seq) VALUES (p_stream, 1)
    ON CONFLICT (stream_id) DO UPDATE SET seq = event_streams.seq + 1
    RETURNING seq INTO v_seq;
  WITH ins AS (
    INSERT INTO events (id, type, stream_id, stream_type, business_id, seq, data, owner, brand_id)
      SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), p_type, p_stream, p_stream_type, p_business,
             v_seq, p_data, p_owner, b.brand
        FROM unnest(v_brands) WITH ORDINALITY AS b (brand, n)
       ORDER BY b.n
    RETURNING id, brand_id, inserted),
       fan AS (
    -- A stream's events reach an endpoint in order: one behind a pending one of its stream waits
    -- (due at infinity) until that one is delivered or given up, which makes it due.
    INSERT INTO webhook_deliveries (event_id, endpoint_id, stream_id, seq, next_attempt_at)
      SELECT ins.id, ep.id, p_stream, v_seq,
             CASE WHEN EXISTS (SELECT 1 FROM webhook_deliveries w
                                WHERE w.endpoint_id = ep.id AND w.stream_id = p_stream AND w.state = 'pending')
                  THEN 'infinity'::timestamptz ELSE now() END
        FROM ins JOIN webhook_endpoints ep ON ep.brand_id = ins.brand_id
       WHERE ep.enabled
         AND (p_owner IS NULL OR ep.owner = p_owner)
         AND ('*' = ANY (ep.events) OR p_type = ANY (ep.events)))
  SELECT id INTO v_id FROM ins ORDER BY inserted LIMIT 1;
  RETURN v_id;
END $$;

-- Down Migration
-- Back to one event per change: the first copy of each stays, the others (and their deliveries)
-- go.
DELETE FROM events e USING events first
 WHERE first.stream_id = e.stream_id AND first.seq = e.seq AND first.inserted < e.inserted;
CREATE OR REPLACE FUNCTION pixflow_append_event(p_type text, p_stream text, p_stream_type text, p_business text,
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
DROP FUNCTION pixflow_event_brands(text, text, text);
ALTER TABLE events ADD CONSTRAINT events_stream_id_seq_key UNIQUE (stream_id, seq);
ALTER TABLE events DROP CONSTRAINT events_stream_brand_seq_key;
