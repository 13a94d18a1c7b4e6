-- Up Migration
-- The registry of impeded people's last answer about each person (docs/rules.md, Eligibility), on their
-- customers row: reused while fresh, and while impeded, why, since when and from which check.
ALTER TABLE customers
  ADD COLUMN eligibility            text CHECK (eligibility IN ('eligible', 'impeded')),
  ADD COLUMN eligibility_checked_at timestamptz,
  ADD COLUMN impeded_reason         text,
  ADD COLUMN impeded_until          timestamptz,
  ADD COLUMN impeded_since          timestamptz,
  -- Which check found it: registry:onboarding, registry:deposit, registry:rescreening.
  ADD COLUMN impeded_source         text;

-- Down Migration
ALTER TABLE customers
  DROP COLUMN eligibility,
  DROP COLUMN eligibility_checked_at,
  DROP COLUMN impeded_reason,
  DROP COLUMN impeded_until,
  DROP COLUMN impeded_since,
  DROP COLUMN impeded_source;
