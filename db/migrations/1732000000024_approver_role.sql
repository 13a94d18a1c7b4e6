-- Up Migration
-- Approvers: operators who may approve or refuse a large payout (four eyes), between reviewer and
-- admin. The role is a CHECK, so the new value needs the constraint made again.
ALTER TABLE operators DROP CONSTRAINT operators_role_check;
ALTER TABLE operators
  ADD CONSTRAINT operators_role_check CHECK (role IN ('viewer', 'reviewer', 'approver', 'admin'));

-- Down Migration
-- An approver goes back to the nearest role that existed: reviewer (their sessions end).
UPDATE operators SET role = 'reviewer', updated_at = now() WHERE role = 'approver';
ALTER TABLE operators DROP CONSTRAINT operators_role_check;
ALTER TABLE operators ADD CONSTRAINT operators_role_check CHECK (role IN ('viewer', 'reviewer', 'admin'));
