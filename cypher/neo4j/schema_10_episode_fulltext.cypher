CREATE FULLTEXT INDEX episode_fulltext IF NOT EXISTS
FOR (p:Episode) ON EACH [p.content]
