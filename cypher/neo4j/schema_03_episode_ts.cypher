CREATE INDEX episode_user_ts IF NOT EXISTS FOR (p:Episode) ON (p.user_id, p.ts)
