CREATE INDEX episode_user_checksum IF NOT EXISTS FOR (p:Episode) ON (p.user_id, p.checksum)
