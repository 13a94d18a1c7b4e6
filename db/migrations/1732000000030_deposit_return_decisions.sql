-- Up Migration
-- An operator's return of a completed deposit's money (an impeded person's account closed) is a
-- decision the return flow takes only with its record, as every other decision that moves money.
ALTER TABLE operator_decisions DROP CONSTRAINT operator_decisions_kind_check;
ALTER TABLE operator_decisions ADD CONSTRAINT operator_decisions_kind_check
  CHECK (kind IN ('withdrawal.decision', 'deposit.resolution', 'onboarding.review', 'deposit.return'));

-- Down Migration
ALTER TABLE operator_decisions DROP CONSTRAINT operator_decisions_kind_check;
ALTER TABLE operator_decisions ADD CONSTRAINT operator_decisions_kind_check
  CHECK (kind IN ('withdrawal.decision', 'deposit.resolution', 'onboarding.review'));
