CREATE INDEX FOR (h:History) ON (h.user_id, h.target_uid)
