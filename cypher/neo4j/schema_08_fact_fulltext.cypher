CREATE FULLTEXT INDEX fact_fulltext IF NOT EXISTS
FOR (f:Fact) ON EACH [f.text]
