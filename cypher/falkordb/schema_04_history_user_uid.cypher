CREATE INDEX FOR (h:History) ON (h.uid)
