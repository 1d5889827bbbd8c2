// At most $batch of graphmem's nodes; the adapter repeats it until none is left. Only
// graphmem's labels: Neo4j Community has one database, often shared with other data.
MATCH (n)
WHERE n:Entity OR n:Fact OR n:Episode OR n:History OR n:MessageIndex
   OR n:RelationVectors
WITH n LIMIT $batch
DETACH DELETE n
RETURN count(*) AS deleted
