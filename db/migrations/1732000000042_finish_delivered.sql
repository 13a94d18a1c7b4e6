-- Up Migration
-- Delivered attempts recorded together, in one call (events/outbox-relay.ts, db/webhook-deliveries.ts):
-- what recording one attempt does, for many, with their streams' locks held only while these
-- statements run, never across a client's round trips: a stream's appender (a flow writing its
-- next event) waits for them (migration 1732000000012). Each step is a statement of its own, with
-- a snapshot taken after the locks: it sees what the step before did, and every event appended
-- before its stream was locked. A stream another transaction holds is skipped, never waited for:
-- its deliveries are answered, left as they were, for the caller to record one by one.
CREATE FUNCTION pixflow_finish_delivered(p_ids bigint[], p_endpoints text[], p_events text[], p_streams text[],
                                         p_attempts integer[], p_at timestamptz[], p_durations integer[],
                                         p_statuses integer[], p_responses text[])
RETURNS SETOF bigint LANGUAGE plpgsql AS $$
DECLARE
  v_held text[];
BEGIN
  WITH locked AS (
    SELECT stream_id FROM event_streams WHERE stream_id = ANY (p_streams) FOR UPDATE SKIP LOCKED)
  SELECT coalesce(array_agg(stream_id), '{}') INTO v_held FROM locked;
  WITH a AS (
    SELECT * FROM unnest(p_ids, p_endpoints, p_events, p_streams, p_attempts, p_at, p_durations, p_statuses,
                         p_responses)
                    AS a (delivery_id, endpoint_id, event_id, stream_id, attempt, at, duration_ms, status_code,
                          response)
     WHERE a.stream_id = ANY (v_held)),
       kept AS (
    INSERT INTO webhook_attempts (delivery_id, endpoint_id, event_id, attempt, at, duration_ms, status_code,
                                  response, outcome)
    SELECT delivery_id, endpoint_id, event_id, attempt, at, duration_ms, status_code, response, 'delivered'
      FROM a),
       healthy AS (
    UPDATE webhook_endpoints SET failing_since = NULL
     WHERE id IN (SELECT endpoint_id FROM a) AND failing_since IS NOT NULL)
  UPDATE webhook_deliveries d SET state = 'delivered', delivered_at = now()
    FROM a WHERE d.id = a.delivery_id AND d.state = 'pending';
  -- Each stream's next pending event for the endpoint becomes due, if it was waiting.
  UPDATE webhook_deliveries SET next_attempt_at = now()
   WHERE id IN (SELECT (SELECT w.id FROM webhook_deliveries w
                         WHERE w.endpoint_id = p.endpoint_id AND w.stream_id = p.stream_id AND w.state = 'pending'
                         ORDER BY w.seq LIMIT 1)
                  FROM unnest(p_endpoints, p_streams) AS p (endpoint_id, stream_id)
                 WHERE p.stream_id = ANY (v_held))
     AND next_attempt_at = 'infinity';
  RETURN QUERY SELECT x.id FROM unnest(p_ids, p_streams) AS x (id, stream_id) WHERE NOT x.stream_id = ANY (v_held);
END $$;

-- Down Migration
DROP FUNCTION pixflow_finish_delivered(bigint[], text[], text[], text[], integer[], timestamptz[], integer[],
                                       integer[], text[]);
