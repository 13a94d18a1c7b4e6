-- Up Migration
-- The brands each back-office operator sees and decides (docs/brands.md, "Operators and their
-- brands"). Admins see every brand whatever their rows say. Every operator from before is granted
-- every brand there is, so an upgrade changes nothing anyone sees; an operator made later is
-- granted the default brand (a single-brand install sets nothing new), and admins grant more.
CREATE TABLE operator_brands (
  operator_id bigint NOT NULL REFERENCES operators (id) ON DELETE CASCADE,
  brand_id    text NOT NULL REFERENCES brands (id),
  granted_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (operator_id, brand_id)
);
INSERT INTO operator_brands (operator_id, brand_id) SELECT o.id, b.id FROM operators o CROSS JOIN brands b;

CREATE FUNCTION operator_brands_grant_default() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO operator_brands (operator_id, brand_id) VALUES (NEW.id, 'default') ON CONFLICT DO NOTHING;
  RETURN NULL;
END;
$$;
CREATE TRIGGER operators_grant_default_brand AFTER INSERT ON operators
  FOR EACH ROW EXECUTE FUNCTION operator_brands_grant_default();

-- The brand a flow's workflow id belongs to, for the back office to filter by: a deposit's or a
-- withdrawal's (and its return's and reversals', whose ids follow the deposit's) brand, as its
-- row holds it or else as its id names it. Null for what every brand shares: a person's
-- onboarding and biometric identification, and an id that is no flow's.
CREATE FUNCTION pixflow_flow_brand(p_id text) RETURNS text LANGUAGE sql STABLE AS $$
  SELECT CASE
           WHEN f.workflow_id IS NOT NULL THEN
             CASE WHEN f.type IN ('deposit', 'withdrawal') THEN f.brand_id END
           WHEN p_id ~ '^([a-z][a-z0-9-]{1,39}:)?(deposit|withdrawal)-' THEN pixflow_stream_brand(p_id)
         END
    FROM (SELECT 1) one LEFT JOIN flows f ON f.workflow_id = p_id
$$;

-- The brand an audit row is about: its flow's, its alert's flow's, its API key's, the brand an
-- admin changed, or the brand granted or revoked. Null for what is every brand's (a person, the
-- rules policy, a sign-in, a platform key).
CREATE FUNCTION pixflow_action_brand(p_case_type text, p_case_id text, p_after jsonb) RETURNS text
LANGUAGE sql STABLE AS $$
  SELECT CASE p_case_type
           WHEN 'flow' THEN pixflow_flow_brand(p_case_id)
           WHEN 'alert' THEN (SELECT pixflow_flow_brand(a.flow_id) FROM alerts a WHERE a.id = p_case_id)
           WHEN 'api_key' THEN (SELECT k.brand_id FROM api_keys k WHERE k.id = p_case_id)
           WHEN 'brand' THEN p_case_id
           WHEN 'operator' THEN p_after->>'brand'
         END
$$;

-- Down Migration
DROP FUNCTION pixflow_action_brand(text, text, jsonb);
DROP FUNCTION pixflow_flow_brand(text);
DROP TRIGGER operators_grant_default_brand ON operators;
DROP FUNCTION operator_brands_grant_default();
DROP TABLE operator_brands;
