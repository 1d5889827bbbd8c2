// Messages that mention one entity of a user mention another instead (a merge).
MATCH (p:Episode {user_id: $user_id})-[m:MENTIONS]->(:Entity {user_id: $user_id, uid: $from_uid})
MATCH (k:Entity {user_id: $user_id, uid: $to_uid})
MERGE (p)-[:MENTIONS]->(k)
DELETE m
RETURN count(p) AS moved
