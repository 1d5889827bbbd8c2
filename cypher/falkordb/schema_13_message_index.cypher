CREATE INDEX FOR (m:MessageIndex) ON (m.user_id)
