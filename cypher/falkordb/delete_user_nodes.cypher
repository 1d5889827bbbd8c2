// Every node of one user, a label at a time so that each read is the label's user_id index
// (a match on several labels at once scans every node of every user): entities (with their
// typed relationships), facts, episodes, history, the stored message index and relation
// vectors. One row of count per label.
MATCH (n:Entity {user_id: $user_id}) DETACH DELETE n RETURN count(*) AS deleted
UNION ALL
MATCH (n:Fact {user_id: $user_id}) DETACH DELETE n RETURN count(*) AS deleted
UNION ALL
MATCH (n:Episode {user_id: $user_id}) DETACH DELETE n RETURN count(*) AS deleted
UNION ALL
MATCH (n:History {user_id: $user_id}) DETACH DELETE n RETURN count(*) AS deleted
UNION ALL
MATCH (n:MessageIndex {user_id: $user_id}) DELETE n RETURN count(*) AS deleted
UNION ALL
MATCH (n:RelationVectors {user_id: $user_id}) DELETE n RETURN count(*) AS deleted
