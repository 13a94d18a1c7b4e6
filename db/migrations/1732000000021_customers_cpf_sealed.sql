-- Up Migration
-- The person's CPF sealed with the payload codec's keys (common/secret-box.ts), written with each
-- eligibility answer: the periodic rescreening must send the registry the CPF itself, and the
-- keyed hash cannot give it back. A database dump alone reveals none.
ALTER TABLE customers ADD COLUMN cpf_sealed text;

-- Down Migration
ALTER TABLE customers DROP COLUMN cpf_sealed;
