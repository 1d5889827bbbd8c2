// At most $batch nodes; the adapter repeats it until the database is empty.
MATCH (n)
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
