CREATE INDEX FOR (f:Fact) ON (f.uid, f.user_id)
