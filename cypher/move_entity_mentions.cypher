// Messages that mention one entity of a user ($uid) mention another ($target_uid) instead:
// a merge.
MATCH (p:Episode {user_id: $user_id})-[m:MENTIONS]->(:Entity {user_id: $user_id, uid: $uid})
MATCH (k:Entity {user_id: $user_id, uid: $target_uid})
MERGE (p)-[:MENTIONS]->(k)
DELETE m
RETURN count(p) AS result
