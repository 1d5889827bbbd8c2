// Every user's memory: graphmem's own labels only, so nodes others keep in the same graph or
// database stay where they are.
MATCH (n)
WHERE n:Entity OR n:Fact OR n:Episode OR n:History OR n:MessageIndex
   OR n:RelationVectors
DETACH DELETE n
RETURN count(*) AS deleted
