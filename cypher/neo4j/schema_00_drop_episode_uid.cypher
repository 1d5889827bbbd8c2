// Replaced by episode_user_uid (see schema_00_drop_fact_uid).
DROP CONSTRAINT episode_uid IF EXISTS
