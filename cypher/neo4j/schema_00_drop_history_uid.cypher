// Replaced by history_user_uid (see schema_00_drop_fact_uid).
DROP CONSTRAINT history_uid IF EXISTS
