// At most $batch of one user's nodes; the adapter repeats it until none is left, so no single
// transaction has to hold a large user's whole graph in memory.
MATCH (n:Entity|Fact|Episode|History|MessageIndex|RelationVectors)
WHERE n.user_id = $user_id
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
