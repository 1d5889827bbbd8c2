CREATE INDEX history_user_target IF NOT EXISTS FOR (h:History) ON (h.user_id, h.target_uid)
