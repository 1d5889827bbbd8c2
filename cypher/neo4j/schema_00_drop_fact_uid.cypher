// Earlier versions made a fact's uid unique across users; writes are keyed by (user_id, uid)
// now (schema_02_fact_user_uid), and a uid unique across users would let one user's write
// fail another's.
DROP CONSTRAINT fact_uid IF EXISTS
