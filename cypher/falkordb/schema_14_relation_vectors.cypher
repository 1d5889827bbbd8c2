CREATE INDEX FOR (r:RelationVectors) ON (r.user_id)
